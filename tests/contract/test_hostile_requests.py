"""Hostile requests: request bombs, values that cannot be stored, malformed parameters. One
case per behaviour, the same raw request to the fake and to the real apiserver.

Upstream: staging/src/k8s.io/apiserver/pkg/endpoints/handlers/patch.go (maxJSONPatchOperations
= 10000, a 413; json-patch's copy size limit, armed from JSONPatchMaxCopyBytes in
staging/src/k8s.io/apiserver/pkg/server/config.go); handlers/rest.go (summarizeData in "the
object provided is unrecognized" messages); go-yaml v2 decode.go (allowedAliasRatio: "document
contains excessive aliasing"); encoding/json's scanner (maxNestingDepth = 10000).
"""

from __future__ import annotations

import json
from typing import Any

import httpx
import pytest
from contract_helpers import Target, kubernetes_at_least, unique

BLOB_CRD_GROUP = "hostile.contract.kubectrl.test"
_MERGE = "application/merge-patch+json"
_JSON_PATCH = "application/json-patch+json"
_APPLY = "application/apply-patch+yaml"


def _blob_crd() -> dict[str, Any]:
    return {
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": f"blobs.{BLOB_CRD_GROUP}"},
        "spec": {
            "group": BLOB_CRD_GROUP,
            "scope": "Namespaced",
            "names": {
                "plural": "blobs",
                "singular": "blob",
                "kind": "Blob",
                "listKind": "BlobList",
            },
            "versions": [
                {
                    "name": "v1",
                    "served": True,
                    "storage": True,
                    "schema": {
                        "openAPIV3Schema": {
                            "type": "object",
                            "properties": {
                                "spec": {
                                    "type": "object",
                                    "x-kubernetes-preserve-unknown-fields": True,
                                }
                            },
                        }
                    },
                }
            ],
        },
    }


async def _blobs(target: Target) -> str:
    """The path of the Blob collection in the case's namespace (the CRD installed once)."""
    if target.api is not None or "blob" not in target._crd_cache:
        await target.install_crd(_blob_crd())
        if target.api is None:
            target._crd_cache["blob"] = BLOB_CRD_GROUP
    return f"/apis/{BLOB_CRD_GROUP}/v1/namespaces/{target.namespace}/blobs"


def _blob(name: str, spec: Any = None, **meta: Any) -> dict[str, Any]:
    return {
        "apiVersion": f"{BLOB_CRD_GROUP}/v1",
        "kind": "Blob",
        "metadata": {"name": name, **meta},
        "spec": {} if spec is None else spec,
    }


async def _raw(
    target: Target,
    method: str,
    path: str,
    body: Any = None,
    content_type: str = "application/json",
    **params: str,
) -> httpx.Response:
    """One request as given (the client would refuse or reshape these bodies)."""
    client = target.client
    if body is None:
        content = None
    elif isinstance(body, bytes):
        content = body
    elif isinstance(body, str):
        content = body.encode()
    else:
        content = json.dumps(body).encode()
    return await client._send(
        method,
        path,
        verb=method.lower(),
        label=path,
        params=params,
        raw_content=content,
        extra_headers={"Content-Type": content_type},
        retry=False,
        check_status=False,
    )


def _status(response: httpx.Response) -> tuple[int, str, str]:
    body = response.json()
    return response.status_code, body.get("reason", ""), body.get("message", "")


# ------------------------------------------------------------------------- request bombs


async def test_json_patch_bombs_are_refused(target: Target) -> None:
    """More than maxJSONPatchOperations (10000) is a 413; copies adding more than
    JSONPatchMaxCopyBytes (3 MiB) are json-patch's failure, a 422 without detail."""
    blobs, name = await _blobs(target), unique("copies")
    assert (await _raw(target, "POST", blobs, _blob(name, {"a": "x" * 1024}))).status_code == 201
    ops = [{"op": "add", "path": "/spec/z", "value": 1}] * 10001
    many = await _raw(target, "PATCH", f"{blobs}/{name}", ops, _JSON_PATCH)
    assert _status(many) == (
        413,
        "RequestEntityTooLarge",
        "Request entity too large: The allowed maximum operations in a JSON patch is 10000, "
        "got 10001",
    )
    copies = [{"op": "copy", "from": "/spec", "path": f"/spec/c{i}"} for i in range(13)]
    bomb = await _raw(target, "PATCH", f"{blobs}/{name}", copies, _JSON_PATCH)
    assert _status(bomb) == (
        422,
        "Invalid",
        "the server rejected our request due to an error in our request",
    )
    stored = await _raw(target, "GET", f"{blobs}/{name}")
    assert list(stored.json()["spec"]) == ["a"]


async def test_an_apply_alias_bomb_is_excessive_aliasing(target: Target) -> None:
    """The review's 501-byte body (9**8 leaves): go-yaml's alias ratio refuses it, a 400."""
    blobs, name = await _blobs(target), unique("bomb")
    lines = [f"apiVersion: {BLOB_CRD_GROUP}/v1", "kind: Blob", f"metadata: {{name: {name}}}"]
    lines.append(f"a0: &a0 [{','.join(['lol'] * 9)}]")
    lines += [f"a{i}: &a{i} [{','.join([f'*a{i - 1}'] * 9)}]" for i in range(1, 9)]
    lines.append("spec: {x: *a8}")
    answer = await _raw(
        target, "PATCH", f"{blobs}/{name}", "\n".join(lines), _APPLY, fieldManager="m"
    )
    assert _status(answer) == (
        400,
        "BadRequest",
        _apply_yaml_error("yaml: document contains excessive aliasing"),
    )


async def test_nesting_past_the_decoders_depth_is_a_400(target: Target) -> None:
    """encoding/json's maxNestingDepth (10000): the apiserver refuses deeper bodies before
    decoding them into an object (the fake's own limit is lower: MAX_DEPTH, 100)."""
    blobs, name = await _blobs(target), unique("deep")
    lists = "[" * 10001 + "1" + "]" * 10001
    raw = json.dumps(_blob(name, {"x": "X"})).replace('"X"', lists)
    code, reason, message = _status(await _raw(target, "POST", blobs, raw))
    assert (code, reason) == (400, "BadRequest")
    assert message == (
        "the object provided is unrecognized (must be of type Blob): couldn't get version/kind; "
        f"json parse error: invalid character '[' exceeded max depth ({raw[:30]} ...)"
    )


async def test_an_object_over_etcds_limit_is_refused(target: Target) -> None:
    """etcd's default --max-request-bytes (1.5 MiB): the third 512 KiB patch is refused with
    etcd's error, a 500; a body over the apiserver's 3 MiB is a 413."""
    blobs, name = await _blobs(target), unique("big")
    assert (await _raw(target, "POST", blobs, _blob(name))).status_code == 201
    codes = []
    for i in range(3):
        patch = {"spec": {f"k{i}": "x" * (512 * 1024)}}
        answer = await _raw(target, "PATCH", f"{blobs}/{name}", patch, _MERGE)
        codes.append(answer.status_code)
    assert codes == [200, 200, 500]
    assert _status(answer) == (500, "", "etcdserver: request is too large")
    too_large = await _raw(target, "POST", blobs, _blob(unique("big"), {"a": "x" * 3 * 2**20}))
    assert _status(too_large) == (
        413,
        "RequestEntityTooLarge",
        "Request entity too large: limit is 3145728",
    )
    stored = await _raw(target, "GET", f"{blobs}/{name}")
    assert sorted(stored.json()["spec"]) == ["k0", "k1"]


# ------------------------------------------------------------- values that cannot be served


async def test_non_finite_numbers_are_a_400(target: Target) -> None:
    blobs, name = await _blobs(target), unique("nan")
    raw = json.dumps(_blob(name, {"x": "X"}))
    nan = _status(await _raw(target, "POST", blobs, raw.replace('"X"', "NaN")))
    assert nan == (
        400,
        "BadRequest",
        "the object provided is unrecognized (must be of type Blob): couldn't get version/kind; "
        f"json parse error: invalid character 'N' looking for beginning of value ({raw[:30]} ...)",
    )
    huge = _status(await _raw(target, "POST", blobs, raw.replace('"X"', "1e999")))
    assert huge == (
        400,
        "BadRequest",
        'Blob in version "v1" cannot be handled as a Blob: json: cannot unmarshal number 1e999 '
        "into Go value of type float64",
    )
    assert (await _raw(target, "GET", f"{blobs}/{name}")).status_code == 404


async def test_yaml_dates_binary_and_sets_are_json_strings_and_maps(target: Target) -> None:
    blobs, name = await _blobs(target), unique("yaml")
    body = (
        f"apiVersion: {BLOB_CRD_GROUP}/v1\nkind: Blob\nmetadata: {{name: {name}}}\nspec:\n"
        "  date: 2024-01-01\n  bin: !!binary aGVsbG8=\n  set: !!set {a, b}\n"
    )
    answer = await _raw(target, "PATCH", f"{blobs}/{name}", body, _APPLY, fieldManager="m")
    assert answer.status_code in (200, 201), answer.text
    expected = {"date": "2024-01-01", "bin": "hello", "set": {"a": None, "b": None}}
    assert answer.json()["spec"] == expected
    listed = await _raw(target, "GET", blobs)
    assert [i["spec"] for i in listed.json()["items"] if i["metadata"]["name"] == name] == [
        expected
    ]
    nan = body.replace("2024-01-01", ".nan").replace(name, unique("yaml"))
    refused = await _raw(target, "PATCH", f"{blobs}/{name}x", nan, _APPLY, fieldManager="m")
    assert _status(refused)[:2] == (400, "BadRequest")


async def test_a_custom_resources_label_value_must_be_a_string(target: Target) -> None:
    blobs, name = await _blobs(target), unique("labels")
    answer = await _raw(target, "POST", blobs, _blob(name, labels={"a": 1234}))
    assert _status(answer) == (
        400,
        "BadRequest",
        'Blob in version "v1" cannot be handled as a Blob: json: cannot unmarshal number into '
        "Go struct field ObjectMeta.labels of type string",
    )
    nulled = await _raw(target, "POST", blobs, _blob(name, annotations={"a": None}))
    assert nulled.json()["metadata"]["annotations"] == {"a": ""}


# ---------------------------------------------------------------- 500s that are 400s / 422s


def _apply_yaml_error(detail: str) -> str:
    """An apply body that is not YAML: up to 1.36 the apply patcher's ``yaml.Unmarshal`` wraps
    sigs.k8s.io/yaml's error; from 1.37 ``validateAndTranscodePatch`` transcodes the body with
    ``yaml.ToJSON`` first, which does not (staging/src/k8s.io/apiserver/pkg/endpoints/handlers/
    patch.go, v1.36.3 -> v1.37.2)."""
    if kubernetes_at_least("1.37"):
        return f"error encoding patch: {detail}"
    return f"error decoding YAML: error converting YAML to JSON: {detail}"


async def test_a_yaml_apply_that_does_not_parse_is_a_400(target: Target) -> None:
    blobs = await _blobs(target)
    answer = await _raw(target, "PATCH", f"{blobs}/x", "a: b\n c: d\n", _APPLY, fieldManager="m")
    code, reason, message = _status(answer)
    assert (code, reason) == (400, "BadRequest")
    assert message.startswith(_apply_yaml_error("yaml: line 2: "))


async def test_an_integer_parameter_that_does_not_parse_is_a_400(target: Target) -> None:
    path = f"/api/v1/namespaces/{target.namespace}/configmaps"
    for param in ("limit", "timeoutSeconds"):
        answer = await _raw(target, "GET", path, **{param: "abc"})
        assert _status(answer) == (
            400,
            "BadRequest",
            'strconv.ParseInt: parsing "abc": invalid syntax',
        )


async def test_a_trailing_newline_does_not_make_a_label_valid(target: Target) -> None:
    path = f"/api/v1/namespaces/{target.namespace}/configmaps"
    body = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "abc\n"}}
    answer = await _raw(target, "POST", path, body)
    assert _status(answer)[:2] == (422, "Invalid")
    body["metadata"] = {"name": unique("nl"), "labels": {"a": "b\n"}}
    answer = await _raw(target, "POST", path, body)
    assert _status(answer)[:2] == (422, "Invalid")
    assert answer.json()["details"]["causes"][0]["field"] == "metadata.labels"


async def test_an_unknown_field_with_control_characters_is_warned_escaped(target: Target) -> None:
    path = f"/api/v1/namespaces/{target.namespace}/configmaps"
    body = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": unique("w")}}
    body["a\r\nb"] = 1
    answer = await _raw(target, "POST", path, body, dryRun="All")
    assert answer.status_code == 201
    assert answer.headers.get_list("warning") == ['299 - "unknown field \\"a\\\\r\\\\nb\\""']


@pytest.mark.parametrize("verb", ["create", "patch"])
async def test_a_dry_run_other_than_all_is_a_422_and_writes_nothing(
    target: Target, verb: str
) -> None:
    path, name = f"/api/v1/namespaces/{target.namespace}/configmaps", unique("dry")
    cm = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name}, "data": {"a": "1"}}
    if verb == "create":
        answer = await _raw(target, "POST", path, cm, dryRun="Foo")
        options = "CreateOptions"
    else:
        assert (await _raw(target, "POST", path, cm)).status_code == 201
        patch = {"data": {"a": "2"}}
        answer = await _raw(target, "PATCH", f"{path}/{name}", patch, _MERGE, dryRun="Foo")
        options = "PatchOptions"
    message = 'Unsupported value: ["Foo"]: supported values: "All"'
    assert answer.json() == {
        "kind": "Status",
        "apiVersion": "v1",
        "metadata": {},
        "status": "Failure",
        "message": f'{options}.meta.k8s.io "" is invalid: dryRun: {message}',
        "reason": "Invalid",
        "details": {
            "group": "meta.k8s.io",
            "kind": options,
            "causes": [{"reason": "FieldValueNotSupported", "message": message, "field": "dryRun"}],
        },
        "code": 422,
    }
    stored = await _raw(target, "GET", f"{path}/{name}")
    if verb == "create":
        assert stored.status_code == 404
    else:
        assert stored.json()["data"] == {"a": "1"}
