"""Write options and warnings, on both servers: ``dryRun=All`` and ``fieldValidation``.

k8s.io/apiserver pkg/endpoints/handlers (create.go, update.go, patch.go: the strict decoder's
``strict decoding error: unknown field "..."``, a 400 for a POST/PUT body, a 422 ``Invalid``
cause ``patch`` for a patch; ``Warn`` is the default and sends one ``Warning`` header per
field), pkg/registry/rest (dry run: validated, defaulted, not stored, no watch event).
"""

from __future__ import annotations

import asyncio
import copy
from collections.abc import AsyncIterator
from typing import Any

import httpx
import pytest
from contract_helpers import CM, Target, configmap, unique
from schema_helpers import thing, thing_kind

from kubectrl.client import AsyncClient, WarningRecorder
from kubectrl.errors import BadRequestError, InvalidError, NotFoundError

SPEC: dict[str, Any] = {
    "type": "object",
    "properties": {
        "size": {"type": "integer", "default": 1},
        "tags": {
            "type": "array",
            "items": {"type": "object", "properties": {"n": {"type": "string"}}},
        },
    },
}


@pytest.fixture
async def checked(target: Target) -> AsyncIterator[tuple[AsyncClient, WarningRecorder]]:
    """A second client on the target whose warnings are recorded."""
    recorder = WarningRecorder()
    async with AsyncClient(target.client.config.with_options(warning_handler=recorder)) as c:
        yield c, recorder


async def test_dry_run_create_validates_defaults_and_stores_nothing(target: Target) -> None:
    kind = await thing_kind(target, SPEC)
    obj = thing(kind, target.namespace, {"tags": []})
    name = obj["metadata"]["name"]
    watch = target.client.watch(kind, namespace=target.namespace, resource_version="0")
    answer = await target.client.create(obj, dry_run=True)
    assert answer["spec"]["size"] == 1  # defaulted
    assert answer["metadata"]["uid"]
    with pytest.raises(NotFoundError):
        await target.client.get(kind, name, namespace=target.namespace)
    # The watch sees the real create that follows, not the dry run before it.
    await target.client.create(thing(kind, target.namespace, {}, name=name + "-b"))
    async with watch as events:
        event = await asyncio.wait_for(events.__anext__(), 30)
    assert event.object["metadata"]["name"] == name + "-b"
    with pytest.raises(InvalidError):
        await target.client.create(thing(kind, target.namespace, {"size": "x"}), dry_run=True)


async def test_dry_run_update_patch_delete_change_nothing(target: Target) -> None:
    name = unique("dry")
    cm = await target.client.create(configmap(name, target.namespace, {"a": "1"}))
    cm["data"] = {"a": "2"}
    assert (await target.client.update(cm, dry_run=True))["data"] == {"a": "2"}
    patched = await target.client.patch(
        CM, name, {"data": {"a": "3"}}, namespace=target.namespace, dry_run=True
    )
    assert patched["data"] == {"a": "3"}
    await target.client.delete(CM, name, namespace=target.namespace, dry_run=True)
    await target.client.delete_collection(CM, namespace=target.namespace, dry_run=True)
    stored = await target.client.get(CM, name, namespace=target.namespace)
    assert stored["data"] == {"a": "1"}
    assert stored["metadata"]["resourceVersion"] == cm["metadata"]["resourceVersion"]


async def test_strict_create_and_update_name_the_unknown_fields(target: Target) -> None:
    name = unique("strict")
    body = {**configmap(name, target.namespace, {"a": "1"}), "bogus": 1, "spec": {"x": 2}}
    with pytest.raises(BadRequestError) as err:
        await target.client.create(body, field_validation="Strict")
    assert err.value.server_message == (
        'ConfigMap in version "v1" cannot be handled as a ConfigMap: strict decoding error: '
        'unknown field "bogus", unknown field "spec"'
    )
    cm = await target.client.create(configmap(name, target.namespace, {"a": "1"}))
    with pytest.raises(BadRequestError, match='unknown field "zz"'):
        await target.client.update({**cm, "zz": 1}, field_validation="Strict")


async def test_strict_patch_is_422_naming_the_field(target: Target) -> None:
    name = unique("strict")
    await target.client.create(configmap(name, target.namespace, {"a": "1"}))
    with pytest.raises(InvalidError) as err:
        await target.client.patch(
            CM, name, {"zz": {"q": 1}}, namespace=target.namespace, field_validation="Strict"
        )
    assert err.value.code == 422
    assert err.value.server_message.endswith('strict decoding error: unknown field "zz"')
    assert [cause.field for cause in err.value.causes] == ["patch"]


async def test_custom_resource_unknown_fields_strict_warn_ignore(
    target: Target, checked: tuple[AsyncClient, WarningRecorder]
) -> None:
    kind = await thing_kind(target, SPEC)
    client, recorder = checked
    obj = thing(kind, target.namespace, {"size": 1, "color": "red", "tags": [{"n": "a", "x": 1}]})
    obj["extra"] = True
    with pytest.raises(BadRequestError) as err:
        await client.create(obj, field_validation="Strict")
    assert err.value.server_message == (
        'Thing in version "v1" cannot be handled as a Thing: strict decoding error: '
        'unknown field "extra", unknown field "spec.color", unknown field "spec.tags[0].x"'
    )
    assert recorder.texts == []
    # A copy: the dry run's answer (unknown fields dropped) would refresh ``obj``.
    await client.create(copy.deepcopy(obj), field_validation="Ignore", dry_run=True)
    assert recorder.texts == []
    created = await client.create(obj)  # Warn, the default
    assert recorder.texts == [
        'unknown field "extra"',
        'unknown field "spec.color"',
        'unknown field "spec.tags[0].x"',
    ]
    assert created["spec"] == {"size": 1, "tags": [{"n": "a"}]}


async def test_warn_on_a_patch(
    target: Target, checked: tuple[AsyncClient, WarningRecorder]
) -> None:
    client, recorder = checked
    name = unique("warn")
    await client.create(configmap(name, target.namespace, {"a": "1"}))
    await client.patch(CM, name, {"zz": 1}, namespace=target.namespace, field_validation="Warn")
    assert recorder.texts == ['unknown field "zz"']


async def test_status_and_scale_writes_take_the_options(
    target: Target, checked: tuple[AsyncClient, WarningRecorder]
) -> None:
    client, recorder = checked
    kind = await target.widget()
    name = unique("w")
    await client.create({"apiVersion": kind[0], "kind": kind[1],
                         "metadata": {"name": name, "namespace": target.namespace},
                         "spec": {"replicas": 1}})  # fmt: skip
    with pytest.raises(InvalidError) as err:
        await client.status().patch(
            kind, name, {"status": {"bogus": 1}}, namespace=target.namespace,
            field_validation="Strict",
        )  # fmt: skip
    assert err.value.server_message.endswith('strict decoding error: unknown field "status.bogus"')
    await client.status().patch(kind, name, {"status": {"bogus": 1}}, namespace=target.namespace)
    assert recorder.texts == ['unknown field "status.bogus"']
    scales = client.subresource("scale")
    scale = await scales.get(kind, name, namespace=target.namespace)
    scale["spec"]["replicas"] = 5
    answered = await scales.update(scale, resource=kind, dry_run=True)
    assert answered["spec"]["replicas"] == 5
    stored = await client.get(kind, name, namespace=target.namespace)
    assert stored["spec"]["replicas"] == 1


async def test_built_in_unknown_fields_come_in_the_bodys_order(
    target: Target, checked: tuple[AsyncClient, WarningRecorder]
) -> None:
    # The strict JSON decoder reports them as it reads (not sorted, unlike a custom resource's).
    client, recorder = checked
    name = unique("order")
    container = {"name": "c", "image": "nginx", "bogus": 1, "env": [{"name": "A", "zz": 2}]}
    deploy = {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": name, "namespace": target.namespace, "odd": 1},
        "spec": {
            "selector": {"matchLabels": {"app": name}},
            "template": {
                "metadata": {"labels": {"app": name}},
                "spec": {"containers": [container]},
            },
            "strategy": {"type": "RollingUpdate", "rollingUpdate": {"maxSurge": 1, "q": 1}},
        },
    }
    await client.create(deploy, dry_run=True)
    assert recorder.texts == [
        'unknown field "metadata.odd"',
        'unknown field "spec.template.spec.containers[0].bogus"',
        'unknown field "spec.template.spec.containers[0].env[0].zz"',
        'unknown field "spec.strategy.rollingUpdate.q"',
    ]


async def _post_raw(target: Target, path: str, raw: bytes, **params: str) -> httpx.Response:
    # A body with a key given twice: no dict can hold it, so it is sent as bytes.
    client = target.client
    return await client._send(
        "POST",
        path,
        verb="create",
        label=path,
        params={"dryRun": "All", **params},
        raw_content=raw,
        extra_headers={"Content-Type": "application/json"},
        retry=False,
        check_status=False,
    )


async def test_repeated_keys_are_duplicate_fields_in_the_servers_order(target: Target) -> None:
    ns = target.namespace
    raw = (
        (
            '{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"dup","namespace":"NS",'
            '"labels":{"a":"1","a":"2"}},"data":{"a":"1"},"zz":1,"data":{"b":"2"}}'
        )
        .replace("NS", ns)
        .encode()
    )
    path = f"/api/v1/namespaces/{ns}/configmaps"
    warned = await _post_raw(target, path, raw)
    assert warned.status_code == 201
    assert warned.json()["metadata"]["labels"] == {"a": "2"}
    assert warned.headers.get_list("warning") == [
        '299 - "duplicate field \\"metadata.labels.a\\""',
        '299 - "unknown field \\"zz\\""',
        '299 - "duplicate field \\"data\\""',
    ]
    strict = await _post_raw(target, path, raw, fieldValidation="Strict")
    assert strict.status_code == 400
    assert strict.json()["message"] == (
        'ConfigMap in version "v1" cannot be handled as a ConfigMap: strict decoding error: '
        'duplicate field "metadata.labels.a", unknown field "zz", duplicate field "data"'
    )
    kind = await thing_kind(target, SPEC)
    group = kind[0].split("/")[0]
    raw = (
        (
            '{"apiVersion":"API","kind":"Thing","metadata":{"name":"dup","namespace":"NS"},'
            '"zextra":1,"spec":{"size":1,"color":"r","size":2},"aextra":2}'
        )
        .replace("API", kind[0])
        .replace("NS", ns)
        .encode()
    )
    strict = await _post_raw(
        target, f"/apis/{group}/v1/namespaces/{ns}/things", raw, fieldValidation="Strict"
    )
    assert strict.json()["message"] == (
        'Thing in version "v1" cannot be handled as a Thing: strict decoding error: '
        'duplicate field "spec.size", unknown field "aextra", unknown field "spec.color", '
        'unknown field "zextra"'
    )


async def test_a_repeated_object_key_of_a_built_in_merges(target: Target) -> None:
    ns = target.namespace
    raw = (
        (
            '{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"merge","namespace":"NS"},'
            '"data":{"a":"1"},"data":{"b":"2"}}'
        )
        .replace("NS", ns)
        .encode()
    )
    answer = await _post_raw(target, f"/api/v1/namespaces/{ns}/configmaps", raw)
    assert answer.json()["data"] == {"a": "1", "b": "2"}


async def test_a_repeated_key_is_decoded_into_the_same_go_field(target: Target) -> None:
    """encoding/json decode.go: a struct field given twice decodes into the same struct (fields
    merge, nested structs too), a map field into the same map (an entry given again replaces
    its value), a list or a scalar is replaced."""
    ns = target.namespace
    raw = (
        '{"apiVersion":"v1","kind":"Pod","metadata":{"name":"twice","namespace":"NS",'
        '"labels":{"a":"1","b":"1"}},"metadata":{"labels":{"b":"2"},"annotations":{"x":"y"}},'
        '"spec":{"containers":[{"name":"a","image":"nginx"}],"nodeName":"n1",'
        '"securityContext":{"runAsUser":1}},'
        '"spec":{"containers":[{"name":"b","image":"busybox"}],"nodeName":"n2",'
        '"securityContext":{"runAsGroup":2}}}'
    ).replace("NS", ns)
    answer = await _post_raw(target, f"/api/v1/namespaces/{ns}/pods", raw.encode())
    pod = answer.json()
    assert pod["metadata"]["name"] == "twice"
    assert pod["metadata"]["labels"] == {"a": "1", "b": "2"}
    assert pod["metadata"]["annotations"] == {"x": "y"}
    assert [c["name"] for c in pod["spec"]["containers"]] == ["b"]
    assert pod["spec"]["nodeName"] == "n2"
    assert pod["spec"]["securityContext"] == {"runAsUser": 1, "runAsGroup": 2}
