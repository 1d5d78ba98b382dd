"""The API core served directly (no HTTP library): requests in, replies and watch streams out."""

from __future__ import annotations

import json
from typing import Any

import pytest

from kubectrl._internal.clock import RealClock
from kubectrl.apiserver._endpoints.core import APICore
from kubectrl.apiserver._endpoints.watch import WatchStream
from kubectrl.apiserver._patch.patches import merge_patch
from kubectrl.apiserver._resources.registry import Registry
from kubectrl.apiserver._router import Reply, Request, Route, route
from kubectrl.apiserver._status import FeatureNotImplementedError, StatusError
from kubectrl.apiserver._strategies import builtin_resources


def ns_body(name: str) -> bytes:
    return json.dumps(
        {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name}}
    ).encode()


def cm_body(name: str, **data: str) -> bytes:
    return json.dumps({"metadata": {"name": name}, "data": dict(data)}).encode()


def reply(answer: Reply | WatchStream) -> Reply:
    assert isinstance(answer, Reply), answer
    return answer


@pytest.fixture
def core() -> APICore:
    core = APICore(RealClock())
    assert reply(core.handle(Request("POST", "/api/v1/namespaces", body=ns_body("d")))).code == 201
    return core


def test_routes_name_resource_namespace_name_subresource_and_verb() -> None:
    registry = Registry(builtin_resources())
    found = route(registry, Request("PUT", "/apis/apps/v1/namespaces/d/deployments/x/scale"))
    assert isinstance(found, Route)
    assert (found.info.kind, found.namespace, found.name, found.subresource, found.verb) == (
        "Deployment",
        "d",
        "x",
        "scale",
        "update",
    )
    watch = route(registry, Request("GET", "/api/v1/pods", params={"watch": "true"}))
    assert isinstance(watch, Route)
    assert (watch.verb, watch.namespace) == ("watch", None)
    # The namespace's own status is a subresource, not a namespace called "status".
    status = route(registry, Request("PUT", "/api/v1/namespaces/d/status"))
    assert isinstance(status, Route)
    assert (status.name, status.subresource) == ("d", "status")
    assert isinstance(route(registry, Request("GET", "/apis")), Reply)
    with pytest.raises(StatusError) as err:
        route(registry, Request("GET", "/api/v1/configmaps/x"))  # namespaced, no namespace
    assert err.value.code == 404
    with pytest.raises(StatusError) as err:
        route(registry, Request("POST", "/version"))
    assert err.value.code == 405


def test_create_get_and_conflict_through_requests(core: APICore) -> None:
    path = "/api/v1/namespaces/d/configmaps"
    created = reply(core.handle(Request("POST", path, body=cm_body("a", k="1"))))
    assert created.code == 201
    assert created.body["metadata"]["resourceVersion"] == "2"
    got = reply(core.handle(Request("GET", f"{path}/a")))
    assert got.body["data"] == {"k": "1"}
    assert got.body["kind"] == "ConfigMap"
    stale = json.dumps({"metadata": {"name": "a", "resourceVersion": "1"}}).encode()
    conflict = reply(core.handle(Request("PUT", f"{path}/a", body=stale)))
    assert conflict.code == 409
    assert conflict.body["reason"] == "Conflict"
    listed = reply(core.handle(Request("GET", path)))
    assert [i["metadata"]["name"] for i in listed.body["items"]] == ["a"]


def test_unsupported_features_raise_for_the_server_to_show() -> None:
    core = APICore(RealClock())
    assert reply(core.handle(Request("POST", "/api/v1/namespaces", body=ns_body("d")))).code == 201
    deploy = {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": "x"},
        "spec": {
            "selector": {"matchLabels": {"a": "b"}},
            "template": {
                "metadata": {"labels": {"a": "b"}},
                "spec": {"containers": [{"name": "c", "image": "nginx:1"}]},
            },
        },
    }
    path = "/apis/apps/v1/namespaces/d/deployments"
    assert reply(core.handle(Request("POST", path, body=json.dumps(deploy).encode()))).code == 201
    apply = Request(
        "PATCH",
        f"{path}/x/scale",
        params={"fieldManager": "me"},
        headers={"content-type": "application/apply-patch+yaml"},
        body=b"{}",
    )
    with pytest.raises(FeatureNotImplementedError, match="scale subresource"):
        core.handle(apply)


async def test_a_watch_from_a_resource_version_replays_then_follows(core: APICore) -> None:
    path = "/api/v1/namespaces/d/configmaps"
    reply(core.handle(Request("POST", path, body=cm_body("a"))))
    stream = core.handle(Request("GET", path, params={"watch": "1", "resourceVersion": "1"}))
    assert isinstance(stream, WatchStream)
    reply(core.handle(Request("DELETE", f"{path}/a")))
    events: list[dict[str, Any]] = []
    async for line in stream:
        events.append(json.loads(line))
        if len(events) == 2:
            break
    await stream.aclose()
    assert [(e["type"], e["object"]["metadata"]["name"]) for e in events] == [
        ("ADDED", "a"),
        ("DELETED", "a"),
    ]
    assert core.hub.watchers == []


async def test_a_watch_from_a_compacted_revision_is_one_410_line(core: APICore) -> None:
    reply(core.handle(Request("POST", "/api/v1/namespaces/d/configmaps", body=cm_body("a"))))
    core.storage.compact()
    assert core.storage.compacted == 2
    answer = core.handle(
        Request("GET", "/api/v1/configmaps", params={"watch": "true", "resourceVersion": "0"})
    )
    assert isinstance(answer, WatchStream)  # "0": from now, never expired
    await answer.aclose()
    expired = reply(
        core.handle(
            Request("GET", "/api/v1/configmaps", params={"watch": "true", "resourceVersion": "0x"})
        )
    )
    assert expired.code == 400
    old = core.storage.compacted - 1
    gone = reply(
        core.handle(
            Request(
                "GET", "/api/v1/configmaps", params={"watch": "true", "resourceVersion": str(old)}
            )
        )
    )
    assert gone.content is not None
    event = json.loads(gone.content)
    assert (event["type"], event["object"]["code"], event["object"]["reason"]) == (
        "ERROR",
        410,
        "Expired",
    )


async def test_an_object_created_by_apply_is_stored_and_watched_with_its_managed_fields(
    core: APICore,
) -> None:
    # The apply's field manager belongs to the write itself: a watcher sees it in the ADDED event
    # (as from the apiserver) and a storage keeps it, rather than it being set on the stored
    # object after the write committed.
    path = "/api/v1/namespaces/d/configmaps"
    stream = core.handle(Request("GET", path, params={"watch": "1", "resourceVersion": "1"}))
    assert isinstance(stream, WatchStream)
    applied = Request(
        "PATCH",
        f"{path}/a",
        params={"fieldManager": "me"},
        headers={"content-type": "application/apply-patch+yaml"},
        body=b"{apiVersion: v1, kind: ConfigMap, metadata: {name: a}, data: {k: v}}",
    )
    created = reply(core.handle(applied))
    assert created.code == 201  # handlers/patch.go: an apply that created the object
    assert [m["manager"] for m in created.body["metadata"]["managedFields"]] == ["me"]
    async for line in stream:
        event = json.loads(line)
        break
    await stream.aclose()
    assert event["type"] == "ADDED"
    managed = event["object"]["metadata"].get("managedFields") or []
    assert [(m["manager"], m["operation"]) for m in managed] == [("me", "Apply")]
    history = core.storage.changes(1)
    assert [m["manager"] for m in history[0].object["metadata"]["managedFields"]] == ["me"]


def test_pages_of_a_list_are_the_full_list_in_key_order(core: APICore) -> None:
    """A page is picked without sorting every key (benchmarks/bench_apiserver.py: a page of 100
    of 10,000 objects); the pages, walked with their continue tokens, are still the whole list
    in (namespace, name) order, with ``remainingItemCount`` counting what is left, with and
    without a label selector (as tests/contract/test_lists.py checks against kube-apiserver)."""
    assert reply(core.handle(Request("POST", "/api/v1/namespaces", body=ns_body("a")))).code == 201
    names = [f"cm-{i:02d}" for i in (7, 3, 11, 0, 5, 9, 1, 10, 4, 8, 2, 6)]
    for i, name in enumerate(names):
        body = json.loads(cm_body(name))
        body["metadata"]["labels"] = {"even": str(i % 2 == 0).lower()}
        for ns in ("d", "a"):
            created = core.handle(
                Request(
                    "POST", f"/api/v1/namespaces/{ns}/configmaps", body=json.dumps(body).encode()
                )
            )
            assert reply(created).code == 201

    def walk(path: str, params: dict[str, str]) -> tuple[list[tuple[str, str]], list[Any]]:
        keys: list[tuple[str, str]] = []
        remaining: list[Any] = []
        token = ""
        while True:
            query = {**params, "limit": "5", **({"continue": token} if token else {})}
            body = reply(core.handle(Request("GET", path, params=query))).body
            keys += [(o["metadata"]["namespace"], o["metadata"]["name"]) for o in body["items"]]
            remaining.append(body["metadata"].get("remainingItemCount"))
            token = body["metadata"].get("continue", "")
            if not token:
                return keys, remaining

    every = sorted((ns, n) for ns in ("a", "d") for n in names)
    assert walk("/api/v1/configmaps", {}) == (every, [19, 14, 9, 4, None])
    in_d = [k for k in every if k[0] == "d"]
    assert walk("/api/v1/namespaces/d/configmaps", {}) == (in_d, [7, 2, None])
    even = [k for k in in_d if names.index(k[1]) % 2 == 0]
    assert walk("/api/v1/namespaces/d/configmaps", {"labelSelector": "even=true"}) == (
        even,
        [None, None],
    )


def test_a_continue_token_whose_start_is_not_a_key_is_bad_request(core: APICore) -> None:
    import base64

    token = base64.urlsafe_b64encode(json.dumps({"rv": 1, "start": ["d"]}).encode()).decode()
    answer = core.handle(
        Request("GET", "/api/v1/namespaces/d/configmaps", params={"limit": "1", "continue": token})
    )
    assert reply(answer).code == 400
    assert "continue key is not valid" in reply(answer).body["message"]


def test_lists_see_every_create_and_delete_between_them(core: APICore) -> None:
    """The sorted keys a list bisects are the keys now: a delete and a create between two
    lists (the same count of objects) show in the second; a namespace's page holds only that
    namespace, not one whose name starts with it."""
    for ns in ("a", "a-b", "ab"):
        answer = core.handle(Request("POST", "/api/v1/namespaces", body=ns_body(ns)))
        assert reply(answer).code == 201
        for name in ("x", "z"):
            path = f"/api/v1/namespaces/{ns}/configmaps"
            assert reply(core.handle(Request("POST", path, body=cm_body(name)))).code == 201

    def names(path: str, **params: str) -> list[str]:
        body = reply(core.handle(Request("GET", path, params=params))).body
        return [f"{o['metadata']['namespace']}/{o['metadata']['name']}" for o in body["items"]]

    assert names("/api/v1/namespaces/a/configmaps", limit="10") == ["a/x", "a/z"]
    delete = core.handle(Request("DELETE", "/api/v1/namespaces/a/configmaps/x"))
    assert reply(delete).code == 200
    create = Request("POST", "/api/v1/namespaces/a/configmaps", body=cm_body("y"))
    assert reply(core.handle(create)).code == 201
    assert names("/api/v1/namespaces/a/configmaps", limit="10") == ["a/y", "a/z"]
    assert names("/api/v1/configmaps", limit="3") == ["a/y", "a/z", "a-b/x"]
    assert names("/api/v1/configmaps") == ["a/y", "a/z", "a-b/x", "a-b/z", "ab/x", "ab/z"]


def test_an_answer_keeps_the_state_it_was_given_at(core: APICore) -> None:
    """Answers share the stored object's values instead of copying them; that is sound only
    because every write stores a new object. An answer (get, list, create, a watch's object)
    given before a write still shows the state it was given at."""
    path = "/api/v1/namespaces/d/configmaps"
    created = reply(core.handle(Request("POST", path, body=cm_body("a", k="1"))))
    got = reply(core.handle(Request("GET", f"{path}/a")))
    meta = reply(
        core.handle(
            Request(
                "GET",
                f"{path}/a",
                headers={"accept": "application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1"},
            )
        )
    )
    listed = reply(core.handle(Request("GET", path)))
    rv = got.body["metadata"]["resourceVersion"]
    put = json.dumps({"metadata": {"name": "a", "resourceVersion": rv}, "data": {"k": "2"}})
    assert reply(core.handle(Request("PUT", f"{path}/a", body=put.encode()))).code == 200
    merge = {"content-type": "application/merge-patch+json"}
    patch = json.dumps({"data": {"k": "3"}, "metadata": {"labels": {"l": "x"}}}).encode()
    patched = reply(core.handle(Request("PATCH", f"{path}/a", headers=merge, body=patch)))
    assert patched.body["data"] == {"k": "3"}
    for answer in (created.body, got.body, listed.body["items"][0]):
        assert answer["data"] == {"k": "1"}
        assert answer["metadata"]["resourceVersion"] == rv
        assert "labels" not in answer["metadata"]
    assert "labels" not in meta.body["metadata"]
    again = reply(core.handle(Request("GET", f"{path}/a")))
    assert (again.body["data"], again.body["metadata"]["labels"]) == ({"k": "3"}, {"l": "x"})


def test_a_merge_patch_shares_nothing_with_its_target_or_its_patch() -> None:
    """RFC 7386 merge (nulls delete, objects merge, the rest replaces); the target is copied
    once and patched in place, so the result must still share no value with either input."""
    target = {"a": {"b": [1], "c": {"d": 1}, "x": 1}}
    patch = {"a": {"c": {"e": [2]}, "f": {"g": None, "h": 1}, "x": {"y": None}}}
    result = merge_patch(target, patch)
    assert result == {"a": {"b": [1], "c": {"d": 1, "e": [2]}, "f": {"h": 1}, "x": {}}}
    result["a"]["b"].append(9)
    result["a"]["c"]["e"].append(9)
    result["a"]["f"]["h"] = 2
    assert target == {"a": {"b": [1], "c": {"d": 1}, "x": 1}}
    assert patch == {"a": {"c": {"e": [2]}, "f": {"g": None, "h": 1}, "x": {"y": None}}}


def test_defaults_filled_on_read_copy_only_what_they_change() -> None:
    """Nulls and defaults settled on a shared answer (with_defaults, copy on write) are what
    apiextensions-apiserver's two in-place passes give on a deep copy (below, as
    pkg/apiserver/schema/defaulting/prunenulls.go and algorithm.go define them: nulls not
    nullable and without a default leave, then missing fields and nulls not nullable get their
    default, and a default filled in is defaulted too); the stored object never changes and
    every container that did not have to change is shared. Random schemas and objects."""
    import copy
    import random

    from kubectrl.apiserver._schema.defaults import with_defaults

    def non_nullable_null(value: Any, s: dict[str, Any] | None) -> bool:
        return value is None and s is not None and not s.get("nullable")

    def field_schema(s: dict[str, Any], name: str) -> dict[str, Any] | None:
        props = s.get("properties") or {}
        extra = s.get("additionalProperties")
        return props.get(name, extra if isinstance(extra, dict) else None)

    def prune_nulls(s: dict[str, Any] | None, x: Any) -> None:
        if s is None:
            return
        if isinstance(x, dict):
            for name in list(x):
                sub = field_schema(s, name)
                if (
                    sub is not None
                    and non_nullable_null(x[name], sub)
                    and sub.get("default") is None
                ):
                    del x[name]
                else:
                    prune_nulls(sub, x[name])
        elif isinstance(x, list):
            for item in x:
                prune_nulls(s.get("items"), item)

    def default(s: dict[str, Any] | None, x: Any) -> None:
        if s is None:
            return
        if isinstance(x, dict):
            props = s.get("properties") or {}
            for name, sub in props.items():
                if sub.get("default") is None:
                    continue
                if name not in x or non_nullable_null(x[name], sub):
                    x[name] = copy.deepcopy(sub["default"])
            extra = s.get("additionalProperties")
            for name in x:
                if name in props:
                    default(props[name], x[name])
                elif isinstance(extra, dict):
                    if non_nullable_null(x[name], extra):
                        x[name] = copy.deepcopy(extra.get("default"))
                    default(extra, x[name])
        elif isinstance(x, list) and isinstance(s.get("items"), dict):
            items = s["items"]
            for i in range(len(x)):
                if non_nullable_null(x[i], items):
                    x[i] = copy.deepcopy(items.get("default"))
                default(items, x[i])

    def settle(s: dict[str, Any], x: Any) -> Any:
        prune_nulls(s, x)
        default(s, x)
        return x

    rng = random.Random(11)

    def schema(depth: int) -> dict[str, Any]:
        kind = rng.choice(("object", "object", "array", "map", "leaf"))
        out: dict[str, Any] = {}
        if depth == 0 or kind == "leaf":
            pass
        elif kind == "object":
            out["properties"] = {f"p{i}": schema(depth - 1) for i in range(rng.randrange(1, 4))}
        elif kind == "array":
            out["items"] = schema(depth - 1)
        else:
            out["additionalProperties"] = schema(depth - 1)
        if rng.random() < 0.4:
            out["default"] = rng.choice((1, "d", {}, {"p0": 2}, [], [{}], None))
        if rng.random() < 0.3:
            out["nullable"] = True
        return out

    def value(s: dict[str, Any], depth: int) -> Any:
        if rng.random() < 0.15:
            return None
        if "properties" in s and depth:
            props = s["properties"]
            return {k: value(v, depth - 1) for k, v in props.items() if rng.random() < 0.5}
        if "items" in s and depth:
            return [value(s["items"], depth - 1) for _ in range(rng.randrange(3))]
        if "additionalProperties" in s and depth:
            extra = s["additionalProperties"]
            return {f"k{i}": value(extra, depth - 1) for i in range(rng.randrange(3))}
        return rng.choice((0, "x", {}, [], None))

    changed = unchanged = nulls = 0
    for _ in range(2000):
        s = schema(4)
        stored = value(s, 4)
        before = copy.deepcopy(stored)
        served = with_defaults(s, stored)
        assert served == settle(s, copy.deepcopy(stored))
        nulls += "None" in repr(stored)
        assert stored == before
        if served is stored:
            unchanged += 1
        else:
            changed += 1
            assert with_defaults(s, served) is served  # defaulted once: nothing left to fill
    assert min(changed, unchanged) > 100
    assert nulls > 100
