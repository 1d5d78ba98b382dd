"""Store / Indexer invariants."""

from __future__ import annotations

import threading
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kubectrl.cache import NAMESPACE_INDEX, CacheMutationError, Indexer, Lister
from kubectrl.errors import NotFoundError


def obj(ns: str, name: str, app: str = "", rv: int = 1) -> dict[str, Any]:
    meta: dict[str, Any] = {"name": name, "resourceVersion": str(rv), "labels": {"app": app}}
    if ns:
        meta["namespace"] = ns
    return {"metadata": meta}


def by_app(o: Any) -> list[str]:
    app = o["metadata"]["labels"].get("app")
    return [app] if app else []


def by_letters(o: Any) -> list[str]:
    return sorted(set(o["metadata"]["name"]))  # several values per object


def test_keys_are_namespace_slash_name_or_name() -> None:
    idx = Indexer()
    idx.add(obj("ns", "a"))
    idx.add(obj("", "node-1"))
    assert sorted(idx.list_keys()) == ["node-1", "ns/a"]
    assert idx.get_by_key("ns/a") is not None
    assert idx.get(obj("ns", "a")) is idx.get_by_key("ns/a")


def test_namespace_index_is_built_in() -> None:
    idx = Indexer()
    idx.add(obj("a", "x"))
    idx.add(obj("b", "y"))
    idx.add(obj("a", "z"))
    assert idx.index_keys(NAMESPACE_INDEX, "a") == ["a/x", "a/z"]
    assert idx.list_index_func_values(NAMESPACE_INDEX) == ["a", "b"]


def test_reads_return_the_shared_object_not_a_copy() -> None:
    idx = Indexer()
    o = obj("ns", "a")
    idx.add(o)
    assert idx.get_by_key("ns/a") is o
    assert idx.by_index(NAMESPACE_INDEX, "ns")[0] is o


def test_add_indexers_backfills_and_rejects_duplicates() -> None:
    idx = Indexer()
    idx.add(obj("ns", "a", app="web"))
    idx.add(obj("ns", "b", app="db"))
    idx.add_indexers({"app": by_app})
    assert idx.index_keys("app", "web") == ["ns/a"]
    with pytest.raises(ValueError, match="app"):
        idx.add_indexers({"app": by_app, "other": by_app})
    assert "other" not in idx.index_names()  # the failed call changed nothing
    with pytest.raises(ValueError, match="namespace"):
        idx.add_indexers({NAMESPACE_INDEX: by_app})


def test_unknown_index_raises_key_error() -> None:
    with pytest.raises(KeyError, match="nope"):
        Indexer().by_index("nope", "x")


def test_update_moves_index_entries_and_delete_removes_them() -> None:
    idx = Indexer({"app": by_app})
    idx.add(obj("ns", "a", app="web"))
    idx.update(obj("ns", "a", app="db", rv=2))
    assert idx.index_keys("app", "web") == []
    assert idx.list_index_func_values("app") == ["db"]
    assert idx.delete(obj("ns", "a"))["metadata"]["resourceVersion"] == "2"
    assert idx.list_index_func_values("app") == []
    assert idx.list_index_func_values(NAMESPACE_INDEX) == []
    assert idx.delete_key("ns/a") is None


def test_replace_is_atomic_and_returns_previous() -> None:
    idx = Indexer({"app": by_app})
    idx.add(obj("ns", "a", app="web"))
    previous = idx.replace([obj("ns", "b", app="web"), obj("ns", "c", app="db")])
    assert list(previous) == ["ns/a"]
    assert sorted(idx.list_keys()) == ["ns/b", "ns/c"]
    assert idx.index_keys("app", "web") == ["ns/b"]


def test_readers_in_threads_never_see_half_a_replace() -> None:
    # Each generation has 200 objects in namespace "g<n>"; a consistent reader sees exactly one
    # whole generation.
    idx = Indexer()
    idx.replace([obj("g0", f"o{i}") for i in range(200)])
    stop = threading.Event()
    bad: list[str] = []

    def reader() -> None:
        while not stop.is_set():
            items = idx.list()
            namespaces = {o["metadata"]["namespace"] for o in items}
            if len(items) != 200 or len(namespaces) != 1:
                bad.append(f"{len(items)} {namespaces}")
            values = idx.list_index_func_values(NAMESPACE_INDEX)
            if len(values) != 1:
                bad.append(f"index {values}")

    threads = [threading.Thread(target=reader) for _ in range(3)]
    for t in threads:
        t.start()
    for gen in range(1, 150):
        idx.replace([obj(f"g{gen}", f"o{i}") for i in range(200)])
    stop.set()
    for t in threads:
        t.join()
    assert bad == []


def test_mutation_detector_reports_in_place_changes(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    monkeypatch.setenv("KUBECTRL_CACHE_MUTATION_DETECTOR", "1")
    idx = Indexer()
    assert idx.detects_mutations
    o = obj("ns", "a")
    idx.add(o)
    assert idx.verify_no_mutations() == []
    o["metadata"]["labels"]["sneaky"] = "yes"
    with pytest.raises(CacheMutationError, match="ns/a"):
        idx.verify_no_mutations()
    # The write path reports it too, without raising (the informer must go on).
    idx.update(obj("ns", "a", rv=2))
    assert "mutated" in caplog.text


def test_mutation_detector_is_off_by_default(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("KUBECTRL_CACHE_MUTATION_DETECTOR", raising=False)
    idx = Indexer()
    o = obj("ns", "a")
    idx.add(o)
    o["metadata"]["name"] = "changed"
    assert idx.verify_no_mutations() == []


def test_lister_selectors_and_not_found() -> None:
    idx = Indexer()
    idx.add(obj("ns", "a", app="web"))
    idx.add(obj("ns", "b", app="db"))
    idx.add(obj("other", "c", app="web"))
    idx.add(obj("", "node"))
    lister = Lister(idx, resource="configmaps")
    assert [o["metadata"]["name"] for o in lister.list("app=web")] == ["a", "c"]
    assert [o["metadata"]["name"] for o in lister.list({"app": "db"})] == ["b"]
    assert [o["metadata"]["name"] for o in lister.list("app in (db, web),app!=db")] == ["a", "c"]
    assert len(lister.list()) == 4
    assert [o["metadata"]["name"] for o in lister.namespace("ns").list("app")] == ["a", "b"]
    assert lister.namespace("ns").get("a")["metadata"]["name"] == "a"
    assert lister.get("node")["metadata"]["name"] == "node"
    with pytest.raises(NotFoundError) as info:
        lister.namespace("ns").get("zzz")
    assert "zzz" in str(info.value)
    assert info.value.namespace == "ns"
    with pytest.raises(ValueError, match="invalid"):
        lister.list("a b c")


# ------------------------------------------------------------------ property test

names = st.sampled_from([f"n{i}" for i in range(6)])
namespaces = st.sampled_from(["", "a", "b"])
apps = st.sampled_from(["", "web", "db"])
objects = st.builds(obj, namespaces, names, apps, st.integers(1, 9))
ops = st.lists(
    st.one_of(
        st.tuples(st.just("add"), objects),
        st.tuples(st.just("delete"), objects),
        st.tuples(st.just("replace"), st.lists(objects, max_size=6)),
        st.tuples(st.just("index"), st.sampled_from(["app", "letters"])),
    ),
    max_size=40,
)


def _key(o: dict[str, Any]) -> str:
    meta = o["metadata"]
    return f"{meta['namespace']}/{meta['name']}" if meta.get("namespace") else meta["name"]


@settings(max_examples=300, deadline=None)
@given(ops)
def test_indexes_always_match_a_model(operations: list[tuple[str, Any]]) -> None:
    funcs = {"app": by_app, "letters": by_letters}
    idx = Indexer()
    model: dict[str, dict[str, Any]] = {}
    active = {NAMESPACE_INDEX: lambda o: [o["metadata"].get("namespace", "")]}
    for op, arg in operations:
        if op == "add":
            idx.add(arg)
            model[_key(arg)] = arg
        elif op == "delete":
            idx.delete(arg)
            model.pop(_key(arg), None)
        elif op == "replace":
            idx.replace(arg)
            model = {_key(o): o for o in arg}
        elif arg not in active:
            idx.add_indexers({arg: funcs[arg]})
            active[arg] = funcs[arg]
        else:
            with pytest.raises(ValueError, match="already exist"):
                idx.add_indexers({arg: funcs[arg]})
        assert idx.items() == model
        for name, func in active.items():
            expected: dict[str, set[str]] = {}
            for key, o in model.items():
                for value in func(o):
                    expected.setdefault(value, set()).add(key)
            assert idx.list_index_func_values(name) == sorted(expected)
            for value, keys in expected.items():
                assert idx.index_keys(name, value) == sorted(keys)
                assert [_key(o) for o in idx.by_index(name, value)] == sorted(keys)
