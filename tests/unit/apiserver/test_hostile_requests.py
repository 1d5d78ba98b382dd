"""Hostile requests to the API core: bombs refused before their work starts, and nothing
stored that cannot be served back (on MemoryStorage and SQLiteStorage alike).

What the real apiserver answers to each is checked in tests/contract/test_hostile_requests.py;
here: the core's answer, that nothing was stored, that reads and watches still work, and the
memory a refused bomb cost (tracemalloc; bounds taken from measurements with wide margins).
"""

from __future__ import annotations

import asyncio
import json
import tracemalloc
from collections.abc import Callable, Iterator
from typing import Any

import pytest

from kubectrl._internal.clock import RealClock
from kubectrl.apiserver._endpoints.core import APICore
from kubectrl.apiserver._endpoints.watch import WatchStream
from kubectrl.apiserver._patch.patches import MAX_JSON_PATCH_OPERATIONS
from kubectrl.apiserver._resources.objects import MAX_DEPTH, MAX_OBJECT_BYTES, decode_yaml
from kubectrl.apiserver._router import Reply, Request
from kubectrl.apiserver._storage.memory import MemoryStorage, Storage
from kubectrl.apiserver._storage.sqlite import SQLiteStorage
from kubectrl.client import AsyncClient
from kubectrl.testing import FakeAPI

_CRD = {
    "apiVersion": "apiextensions.k8s.io/v1",
    "kind": "CustomResourceDefinition",
    "metadata": {"name": "blobs.hostile.test"},
    "spec": {
        "group": "hostile.test",
        "scope": "Namespaced",
        "names": {"plural": "blobs", "singular": "blob", "kind": "Blob", "listKind": "BlobList"},
        "versions": [
            {
                "name": "v1",
                "served": True,
                "storage": True,
                "schema": {
                    "openAPIV3Schema": {
                        "type": "object",
                        "properties": {
                            "spec": {"type": "object", "x-kubernetes-preserve-unknown-fields": True}
                        },
                    }
                },
            }
        ],
    },
}
BLOBS = "/apis/hostile.test/v1/namespaces/d/blobs"
CMS = "/api/v1/namespaces/d/configmaps"
JSON_PATCH = {"content-type": "application/json-patch+json"}
MERGE = {"content-type": "application/merge-patch+json"}
APPLY = {"content-type": "application/apply-patch+yaml"}


def _reply(answer: Reply | WatchStream) -> Reply:
    assert isinstance(answer, Reply), answer
    return answer


def _blob(name: str, spec: Any = None, **meta: Any) -> dict[str, Any]:
    return {
        "apiVersion": "hostile.test/v1",
        "kind": "Blob",
        "metadata": {"name": name, **meta},
        "spec": {} if spec is None else spec,
    }


@pytest.fixture(params=["memory", "sqlite"])
def core(request: pytest.FixtureRequest) -> Iterator[APICore]:
    storage: Storage = MemoryStorage() if request.param == "memory" else SQLiteStorage(":memory:")
    core = APICore(RealClock(), storage=storage)
    ns = {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "d"}}
    assert _send(core, "POST", "/api/v1/namespaces", ns).code == 201
    crds = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions"
    assert _send(core, "POST", crds, _CRD).code == 201
    yield core
    if isinstance(storage, SQLiteStorage):
        storage.close()


def _send(
    core: APICore,
    method: str,
    path: str,
    body: Any = None,
    headers: dict[str, str] | None = None,
    **params: str,
) -> Reply:
    raw = body if isinstance(body, bytes) else b"" if body is None else json.dumps(body).encode()
    return _reply(core.handle(Request(method, path, params, headers or {}, raw)))


def _names(core: APICore, path: str = BLOBS) -> list[str]:
    answer = _send(core, "GET", path)
    assert answer.code == 200, answer.body
    return [item["metadata"]["name"] for item in answer.body["items"]]


def _peak(call: Callable[[], Reply]) -> tuple[Reply, int]:
    tracemalloc.start()
    try:
        answer = call()
        return answer, tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def _alias_bomb(levels: int, leaf: str = '"lol"') -> str:
    """A YAML document of ``levels`` anchors, each a list of nine aliases of the one before:
    9**levels leaves from about 60 bytes a level."""
    lines = [f"a0: &a0 [{','.join([leaf] * 9)}]"]
    lines += [f"a{i}: &a{i} [{','.join([f'*a{i - 1}'] * 9)}]" for i in range(1, levels + 1)]
    return "\n".join(lines)


# ------------------------------------------------------------------------- request bombs


def test_a_json_patch_of_copies_is_refused_once_its_copies_pass_3_mib(core: APICore) -> None:
    # Each copy doubles spec: 13 of them from 1 KiB make 8 MiB. Measured: the refusal peaks
    # at 4.8 MiB of traced memory (3 MiB of copies and their JSON); 64 MiB is the bound.
    assert _send(core, "POST", BLOBS, _blob("copies", {"a": "x" * 1024})).code == 201
    ops = [{"op": "copy", "from": "/spec", "path": f"/spec/c{i}"} for i in range(13)]
    answer, peak = _peak(lambda: _send(core, "PATCH", f"{BLOBS}/copies", ops, JSON_PATCH))
    assert answer.code == 422, answer.body
    assert answer.body["message"] == (
        "the server rejected our request due to an error in our request"
    )
    assert peak < 64 * 2**20, f"{peak / 2**20:.1f} MiB"
    stored = _send(core, "GET", f"{BLOBS}/copies").body
    assert list(stored["spec"]) == ["a"]


def test_a_json_patch_of_more_than_10000_operations_is_a_413(core: APICore) -> None:
    assert _send(core, "POST", BLOBS, _blob("ops")).code == 201
    ops = [{"op": "test", "path": "/spec", "value": {}}] * (MAX_JSON_PATCH_OPERATIONS + 1)
    answer = _send(core, "PATCH", f"{BLOBS}/ops", ops, JSON_PATCH)
    assert (answer.code, answer.body["reason"]) == (413, "RequestEntityTooLarge")
    assert answer.body["message"] == (
        "Request entity too large: The allowed maximum operations in a JSON patch is 10000, "
        "got 10001"
    )


@pytest.mark.parametrize("field", ["spec", "string"])
def test_an_apply_whose_aliases_expand_past_the_limits_is_refused_before_it_is_built(
    core: APICore, field: str
) -> None:
    # The review's 501-byte body: 9**8 (43 million) leaves. Measured: refused with a peak of
    # under 1 MiB, the node graph walked once (each node once: the work is bounded by the
    # body's size before any value is built); 16 MiB is the bound.
    bomb = _alias_bomb(8)
    target = "spec: {x: *a8}" if field == "spec" else "s: *a8"
    body = f"apiVersion: hostile.test/v1\nkind: Blob\nmetadata: {{name: bomb}}\n{bomb}\n{target}"
    answer, peak = _peak(
        lambda: _send(core, "PATCH", f"{BLOBS}/bomb", body.encode(), APPLY, fieldManager="m")
    )
    assert answer.code == 400, answer.body
    # (1.37's wording, the core's default: validateAndTranscodePatch's yaml.ToJSON)
    assert answer.body["message"] == (
        "error encoding patch: yaml: document contains excessive aliasing"
    )
    assert peak < 16 * 2**20, f"{peak / 2**20:.1f} MiB"
    assert _names(core) == []


def test_an_alias_bomb_within_the_alias_ratio_is_bounded_by_the_request_size() -> None:
    # 9**6 leaves of 3 bytes expand to about 3.7 MiB of JSON: under go-yaml's alias ratio, over
    # the 3 MiB a request may carry.
    with pytest.raises(Exception, match="excessive aliasing"):
        decode_yaml(_alias_bomb(6).encode())
    small = decode_yaml(b"a: &x {k: v}\nb: *x\n")
    assert small == {"a": {"k": "v"}, "b": {"k": "v"}}
    assert small["a"] is not small["b"]  # an alias is a value of its own


def test_nesting_deeper_than_the_limit_is_a_400_and_nothing_is_stored(core: APICore) -> None:
    def nested(name: str, depth: int) -> bytes:
        lists = "[" * depth + "1" + "]" * depth
        return json.dumps(_blob(name, {"x": "X"})).replace('"X"', lists).encode()

    # spec and the object itself are two levels: MAX_DEPTH - 2 lists fit
    fits = _send(core, "POST", BLOBS, nested("fits", MAX_DEPTH - 2))
    assert fits.code == 201, fits.body
    for name, depth in (("deep", MAX_DEPTH - 1), ("deeper", 488), ("deepest", 20_000)):
        answer = _send(core, "POST", BLOBS, nested(name, depth))
        assert answer.code == 400, (depth, answer.body)
        assert "invalid character '[' exceeded max depth" in answer.body["message"]
    patch = b'{"spec": {"x": ' + b"[" * MAX_DEPTH + b"]" * MAX_DEPTH + b"}}"
    assert _send(core, "PATCH", f"{BLOBS}/fits", patch, MERGE).code == 400
    deep_yaml = f"apiVersion: hostile.test/v1\nkind: Blob\nspec: {{x: {'[' * 150}{']' * 150}}}"
    applied = _send(core, "PATCH", f"{BLOBS}/y", deep_yaml.encode(), APPLY, fieldManager="m")
    assert applied.code == 400, applied.body
    assert _names(core) == ["fits"]


def test_an_object_over_the_storage_limit_is_refused_as_etcd_refuses_it(core: APICore) -> None:
    # 512 KiB a patch: the third one would store 1.5 MiB and more.
    assert _send(core, "POST", BLOBS, _blob("big")).code == 201
    codes = []
    for i in range(4):
        patch = {"spec": {f"k{i}": "x" * (512 * 1024)}}
        answer = _send(core, "PATCH", f"{BLOBS}/big", patch, MERGE)
        codes.append(answer.code)
    assert codes == [200, 200, 500, 500]
    assert answer.body["message"] == "etcdserver: request is too large"
    assert "reason" not in answer.body
    stored = _send(core, "GET", f"{BLOBS}/big").body
    assert sorted(stored["spec"]) == ["k0", "k1"]
    created = _send(core, "POST", BLOBS, _blob("big2", {"a": "x" * MAX_OBJECT_BYTES}))
    assert created.code == 500
    body = json.dumps(_blob("big3", {"a": "x" * (3 * 2**20)})).encode()
    too_large = _send(core, "POST", BLOBS, body)
    assert (too_large.code, too_large.body["reason"]) == (413, "RequestEntityTooLarge")
    assert too_large.body["message"] == "Request entity too large: limit is 3145728"
    assert _names(core) == ["big"]


# ------------------------------------------------------------- values that cannot be served


@pytest.mark.parametrize(
    ("literal", "message"),
    [
        ("NaN", "invalid character 'N' looking for beginning of value"),
        ("Infinity", "invalid character 'I' looking for beginning of value"),
        ("1e999", "json: cannot unmarshal number 1e999 into Go value of type float64"),
    ],
)
def test_non_finite_numbers_are_a_400(core: APICore, literal: str, message: str) -> None:
    raw = json.dumps(_blob("n")).replace('"spec": {}', f'"spec": {{"x": {literal}}}').encode()
    answer = _send(core, "POST", BLOBS, raw)
    assert answer.code == 400, answer.body
    assert message in answer.body["message"]
    assert _names(core) == []


async def test_yaml_dates_binary_and_sets_are_stored_as_json_and_watched(core: APICore) -> None:
    watch = core.handle(Request("GET", BLOBS, {"watch": "1", "resourceVersion": "0"}))
    assert isinstance(watch, WatchStream)
    body = (
        "apiVersion: hostile.test/v1\nkind: Blob\nmetadata: {name: y}\nspec:\n"
        "  date: 2024-01-01\n  stamp: !!timestamp 2001-12-14t21:59:43.10-05:00\n"
        "  bin: !!binary aGVsbG8=\n  set: !!set {a, b}\n"
    )
    answer = _send(core, "PATCH", f"{BLOBS}/y", body.encode(), APPLY, fieldManager="m")
    assert answer.code in (200, 201), answer.body
    assert answer.body["spec"] == {
        "date": "2024-01-01",
        "stamp": "2001-12-14t21:59:43.10-05:00",
        "bin": "hello",
        "set": {"a": None, "b": None},
    }
    assert _names(core) == ["y"]
    events = watch.__aiter__()
    line = await asyncio.wait_for(events.__anext__(), 5)
    event = json.loads(line)
    assert (event["type"], event["object"]["spec"]["bin"]) == ("ADDED", "hello")
    await watch.aclose()


@pytest.mark.parametrize("value", [".nan", "-.inf"])
def test_yaml_non_finite_numbers_are_a_400(core: APICore, value: str) -> None:
    body = f"apiVersion: hostile.test/v1\nkind: Blob\nmetadata: {{name: n}}\nspec: {{x: {value}}}"
    answer = _send(core, "PATCH", f"{BLOBS}/n", body.encode(), APPLY, fieldManager="m")
    assert answer.code == 400, answer.body
    assert answer.body["message"].startswith("error encoding patch: ")
    assert _names(core) == []


@pytest.mark.parametrize(("value", "go_type"), [(1234, "number"), (True, "bool"), (["a"], "array")])
def test_a_custom_resources_label_values_are_strings(
    core: APICore, value: Any, go_type: str
) -> None:
    for field in ("labels", "annotations"):
        answer = _send(core, "POST", BLOBS, _blob("l", **{field: {"a": value}}))
        assert answer.code == 400, answer.body
        assert answer.body["message"] == (
            'Blob in version "v1" cannot be handled as a Blob: json: cannot unmarshal '
            f"{go_type} into Go struct field ObjectMeta.{field} of type string"
        )
    assert _names(core) == []
    created = _send(core, "POST", BLOBS, _blob("n", annotations={"a": None}))
    assert created.body["metadata"]["annotations"] == {"a": ""}


# ---------------------------------------------------------------- 500s that are 400s / 422s


def test_a_yaml_that_does_not_parse_is_a_400(core: APICore) -> None:
    answer = _send(core, "PATCH", f"{BLOBS}/p", b"a: [\n", APPLY, fieldManager="m")
    assert answer.code == 400, answer.body
    assert answer.body["message"].startswith("error encoding patch: yaml: line 2: ")


@pytest.mark.parametrize("watch", [False, True])
@pytest.mark.parametrize("param", ["limit", "timeoutSeconds"])
def test_integer_query_parameters_that_do_not_parse_are_a_400(
    core: APICore, param: str, watch: bool
) -> None:
    params = {param: "abc", **({"watch": "1"} if watch else {})}
    answer = _reply(core.handle(Request("GET", CMS, params)))
    assert answer.code == 400
    assert answer.body["message"] == 'strconv.ParseInt: parsing "abc": invalid syntax'


@pytest.mark.parametrize(
    "meta",
    [
        {"name": "abc\n"},
        {"name": "lnl", "labels": {"a": "b\n"}},
        {"name": "lk", "labels": {"a\n": "b"}},
    ],
)
def test_a_trailing_newline_does_not_make_a_name_or_label_valid(
    core: APICore, meta: dict[str, Any]
) -> None:
    body = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": meta}
    assert _send(core, "POST", CMS, body).code == 422
    assert _send(core, "POST", BLOBS, _blob(**meta)).code == 422
    assert _names(core, CMS) == []
    assert _names(core) == []


def test_an_unknown_fields_warning_escapes_control_characters(core: APICore) -> None:
    body = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "w"}, "a\r\nb": 1}
    answer = _send(core, "POST", CMS, body)
    assert answer.code == 201
    assert answer.warnings == ('unknown field "a\\r\\nb"',)


async def test_an_unknown_field_with_a_newline_is_answered_through_the_fake() -> None:
    api = FakeAPI()
    body = {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": "w", "namespace": "default"},
    }
    async with AsyncClient(api.config()) as client:
        await client.create({**body, "x\ny": 1})
        assert [o["metadata"]["name"] for o in api.objects("ConfigMap", "default")] == ["w"]


@pytest.mark.parametrize("verb", ["create", "update", "patch", "apply", "delete", "collection"])
def test_a_dry_run_other_than_all_is_a_422_and_nothing_happens(core: APICore, verb: str) -> None:
    cm = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "dr"}, "data": {"a": "1"}}
    assert _send(core, "POST", CMS, cm).code == 201
    changed = {**cm, "data": {"a": "2"}}
    apply = json.dumps({**changed, "metadata": {"name": "dr2"}}).encode()
    answer = {
        "create": lambda: _send(core, "POST", CMS, {**cm, "metadata": {"name": "dr2"}}, dryRun="x"),
        "update": lambda: _send(core, "PUT", f"{CMS}/dr", changed, dryRun="all"),
        "patch": lambda: _send(core, "PATCH", f"{CMS}/dr", {"data": {"a": "2"}}, MERGE, dryRun="x"),
        "apply": lambda: _send(
            core, "PATCH", f"{CMS}/dr2", apply, APPLY, fieldManager="m", dryRun="x"
        ),
        "delete": lambda: _send(core, "DELETE", f"{CMS}/dr", {"dryRun": ["x"]}),
        "collection": lambda: _send(core, "DELETE", CMS, dryRun=""),
    }[verb]()
    assert answer.code == 422, answer.body
    options = {"create": "Create", "update": "Update", "patch": "Patch", "apply": "Patch"}
    kind = options.get(verb, "Delete") + "Options"
    assert answer.body["message"].startswith(f'{kind}.meta.k8s.io "" is invalid: dryRun: ')
    assert answer.body["details"]["causes"][0]["reason"] == "FieldValueNotSupported"
    assert _names(core, CMS) == ["dr"]
    assert _send(core, "GET", f"{CMS}/dr").body["data"] == {"a": "1"}
