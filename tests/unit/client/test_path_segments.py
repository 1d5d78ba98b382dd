"""A name, namespace, subresource or container never leaves its part of the URL.

Reproduced before the fix: ``get/patch/delete(("v1", "ConfigMap"),
"../../kube-system/secrets/admin-toke%6E", namespace="tenant")`` reached a Secret of
kube-system (httpx removes dot segments, the server decodes ``%6E``); an empty name made
``delete`` a deletecollection and ``get`` a list; a ``?`` in a namespace cut the path (a delete
of ``configmaps/settings`` in ``victim?`` deleted the Namespace ``victim``) and a ``#`` dropped
the query (with its ``dryRun``); the pod verbs built their own paths.

The rules are the apiserver's: apimachinery ``pkg/api/validation/path/name.go``
(``IsValidPathSegmentName``: not ``.`` nor ``..``, no ``/`` nor ``%``), which client-go's
``rest/request.go`` applies in ``Name``, ``Namespace``, ``SubResource`` and ``Resource`` (an
empty name is refused too) so that the request fails before it is sent. Other characters are
percent-encoded, as client-go's final URL does, and stay in their segment.

Every refusal is checked against a loopback server that records what reaches it: nothing may,
not even a discovery request.
"""

from __future__ import annotations

import asyncio
import json
import urllib.parse
from collections.abc import Awaitable, Callable
from typing import Any

import pytest
from client_loopback import Request, json_response, loopback

from kubectrl.cache import InformerFactory
from kubectrl.client import APIResource, AsyncClient, BlockingClient, ClientConfig
from kubectrl.client._paths import check_proxy_path, resource_path
from kubectrl.client._rest_extras import proxy_path
from kubectrl.errors import InvalidPathSegmentError, KubectrlError
from kubectrl.runtime import CachedClient

CM = ("v1", "ConfigMap")
DEPLOY = ("apps/v1", "Deployment")

#: Each would move the request elsewhere: dot segments, a slash, percent-escapes the server
#: decodes (``%2e%2e`` is ``..``, ``x%6E`` is ``xn``).
TRAVERSAL = ["..", ".", "a/b", "%2e%2e", "x%6E", "../../kube-system/secrets/admin-toke%6E"]

_DISCOVERY: dict[str, list[dict[str, Any]]] = {
    "/api/v1": [
        {"name": "configmaps", "kind": "ConfigMap", "namespaced": True},
        {"name": "pods", "kind": "Pod", "namespaced": True},
        {"name": "serviceaccounts", "kind": "ServiceAccount", "namespaced": True},
    ],
    "/apis/apps/v1": [
        {"name": "deployments", "kind": "Deployment", "namespaced": True},
        {"name": "deployments/scale", "kind": "Scale", "namespaced": True},
    ],
}


async def _answer(request: Request, writer: asyncio.StreamWriter) -> None:
    path = request.target.split("?")[0]
    if path in _DISCOVERY:
        body: dict[str, Any] = {"kind": "APIResourceList", "resources": _DISCOVERY[path]}
    else:
        body = {"kind": "Status", "items": [], "metadata": {"resourceVersion": "1"}}
    writer.write(json_response(200, body))
    await writer.drain()


def _cm(name: str, namespace: str = "ns") -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": name, "namespace": namespace},
    }


async def _refused(
    calls: dict[str, Callable[[AsyncClient], Awaitable[Any]]], argument: str
) -> list[str]:
    """Run each call on a client of a recording server: each must raise
    InvalidPathSegmentError naming ``argument``, and the server must see nothing."""
    async with loopback(_answer) as server:
        async with AsyncClient(ClientConfig(server=server.url, rate_limit=None)) as client:
            for label, call in calls.items():
                with pytest.raises(InvalidPathSegmentError) as info:
                    await call(client)
                assert info.value.argument == argument, label
        return [r.target for r in server.requests]


async def _drain(iterator: Any) -> None:
    async for _ in iterator:
        pass


def _name_calls(bad: str) -> dict[str, Callable[[AsyncClient], Awaitable[Any]]]:
    return {
        "get": lambda c: c.get(CM, bad, namespace="ns"),
        "patch": lambda c: c.patch(CM, bad, {"data": {}}, namespace="ns"),
        "patch dry-run": lambda c: c.patch(CM, bad, {}, namespace="ns", dry_run=True),
        "apply patch": lambda c: c.patch(
            CM, bad, _cm("x"), namespace="ns", patch_type="apply", field_manager="t"
        ),
        "delete": lambda c: c.delete(CM, bad, namespace="ns"),
        "scale": lambda c: c.scale(DEPLOY, bad, 3, namespace="ns"),
        "status().patch": lambda c: c.status().patch(CM, bad, {}, namespace="ns"),
        "subresource().get": lambda c: c.subresource("scale").get(DEPLOY, bad, namespace="ns"),
        "subresource().patch": lambda c: c.subresource("scale").patch(
            DEPLOY, bad, {}, namespace="ns"
        ),
    }


def _body_name_calls(bad: str) -> dict[str, Callable[[AsyncClient], Awaitable[Any]]]:
    return {
        "update": lambda c: c.update(_cm(bad)),
        "update_status": lambda c: c.status().update(_cm(bad)),
        "apply": lambda c: c.apply(_cm(bad), field_manager="t"),
        "status().apply": lambda c: c.status().apply(_cm(bad), field_manager="t"),
        "patch_merge_from": lambda c: c.patch_merge_from(
            _cm(bad), {**_cm(bad), "data": {"a": "1"}}
        ),
    }


@pytest.mark.parametrize("bad", TRAVERSAL)
async def test_every_async_verb_refuses_a_traversal_name_before_sending(bad: str) -> None:
    calls = {**_name_calls(bad), **_body_name_calls(bad)}
    assert await _refused(calls, "name") == []


async def test_an_empty_name_is_refused_not_turned_into_the_collection() -> None:
    # delete("") was a deletecollection, get("") the list answered as one object.
    assert await _refused(_name_calls(""), "name") == []


@pytest.mark.parametrize("bad", ["..", ".", "a/b", "%2e%2e", "x%6E", "../kube-system"])
async def test_every_async_verb_refuses_a_traversal_namespace_before_sending(bad: str) -> None:
    calls: dict[str, Callable[[AsyncClient], Awaitable[Any]]] = {
        "get": lambda c: c.get(CM, "x", namespace=bad),
        "patch": lambda c: c.patch(CM, "x", {}, namespace=bad),
        "delete": lambda c: c.delete(CM, "x", namespace=bad),
        "update": lambda c: c.update(_cm("x", bad)),
        "apply": lambda c: c.apply(_cm("x", bad), field_manager="t"),
        "create": lambda c: c.create(_cm("x", bad)),
        "create namespace=": lambda c: c.create(_cm("x"), namespace=bad),
        "list": lambda c: c.list(CM, namespace=bad),
        "list_pages": lambda c: _drain(c.list_pages(CM, namespace=bad)),
        "list_items": lambda c: _drain(c.list_items(CM, namespace=bad)),
        "delete_collection": lambda c: c.delete_collection(CM, namespace=bad),
    }

    async def watch(c: AsyncClient) -> None:
        async with c.watch(CM, namespace=bad) as events:
            await _drain(events)

    calls["watch"] = watch
    assert await _refused(calls, "namespace") == []


@pytest.mark.parametrize("bad", ["..", ".", "a/b", "%2e", "../../secrets/admin-token"])
async def test_a_traversal_subresource_is_refused_before_sending(bad: str) -> None:
    calls: dict[str, Callable[[AsyncClient], Awaitable[Any]]] = {
        "get": lambda c: c.get(CM, "x", namespace="ns", subresource=bad),
        "patch": lambda c: c.subresource(bad).patch(CM, "x", {}, namespace="ns"),
        "update": lambda c: c.subresource(bad).update(_cm("x"), resource=CM),
    }
    assert await _refused(calls, "subresource") == []
    async with AsyncClient(ClientConfig(server="http://127.0.0.1:9")) as client:
        with pytest.raises(InvalidPathSegmentError, match="subresource"):
            client.subresource(bad)


def _pod_calls(
    pod: str, namespace: str = "ns", container: str | None = None
) -> dict[str, Callable[[AsyncClient], Awaitable[Any]]]:
    async def open_exec(c: AsyncClient) -> None:
        async with c.pods.open_exec(pod, ["ls"], namespace=namespace, container=container):
            pass

    async def attach(c: AsyncClient) -> None:
        async with c.pods.attach(pod, namespace=namespace, container=container):
            pass

    async def port_forward(c: AsyncClient) -> None:
        async with c.pods.port_forward(pod, 80, namespace=namespace) as forward:
            _, writer = await asyncio.open_connection(*forward.address)
            writer.close()

    calls: dict[str, Callable[[AsyncClient], Awaitable[Any]]] = {
        "exec": lambda c: c.pods.exec(pod, ["ls"], namespace=namespace, container=container),
        "open_exec": open_exec,
        "attach": attach,
        "log": lambda c: c.pods.log(pod, namespace=namespace, container=container),
        "log bytes": lambda c: c.pods.log(
            pod, namespace=namespace, container=container, encoding=None
        ),
        "log_stream": lambda c: _drain(
            c.pods.log_stream(pod, namespace=namespace, container=container)
        ),
        "log_stream bytes": lambda c: _drain(
            c.pods.log_stream(pod, namespace=namespace, container=container, encoding=None)
        ),
    }
    if container is None:
        calls |= {
            "port_forward": port_forward,
            "evict": lambda c: c.pods.evict(pod, namespace=namespace),
            "add_ephemeral_container": lambda c: c.pods.add_ephemeral_container(
                pod, {"name": "debug", "image": "busybox"}, namespace=namespace
            ),
            "create_token": lambda c: c.create_token(pod, namespace=namespace),
            "pods.proxy": lambda c: c.pods.proxy(pod, "/metrics", namespace=namespace, port=80),
            "proxy_service": lambda c: c.proxy_service(pod, "/", namespace=namespace),
        }
    return calls


@pytest.mark.parametrize("bad", TRAVERSAL)
async def test_the_pod_verbs_refuse_a_traversal_pod_name_before_sending(bad: str) -> None:
    # add_ephemeral_container("../../kube-system/pods/victi%6D") patched a pod of kube-system.
    assert await _refused(_pod_calls(bad), "name") == []


@pytest.mark.parametrize("bad", ["..", "a/b", "x%6E", "../kube-system"])
async def test_the_pod_verbs_refuse_a_traversal_namespace_before_sending(bad: str) -> None:
    assert await _refused(_pod_calls("web-0", namespace=bad), "namespace") == []


@pytest.mark.parametrize("bad", ["..", "a/b", "x%2Fy"])
async def test_the_pod_verbs_refuse_a_container_that_is_not_a_name(bad: str) -> None:
    assert await _refused(_pod_calls("web-0", container=bad), "container") == []


async def test_the_pod_verbs_refuse_an_empty_pod_name() -> None:
    assert await _refused(_pod_calls(""), "name") == []


@pytest.mark.parametrize("bad", ["../../../../api/v1/namespaces/kube-system/secrets/x", "a/./b"])
async def test_a_proxied_path_cannot_climb_out_of_the_proxy(bad: str) -> None:
    calls: dict[str, Callable[[AsyncClient], Awaitable[Any]]] = {
        "pods.proxy": lambda c: c.pods.proxy("web-0", bad, namespace="ns", port=80),
        "proxy_service": lambda c: c.proxy_service("web", bad, namespace="ns"),
    }
    assert await _refused(calls, "path") == []
    assert check_proxy_path("/a/..b/c.", verb="proxy", resource="x") == "/a/..b/c."


async def test_a_named_proxy_port_is_one_segment() -> None:
    calls: dict[str, Callable[[AsyncClient], Awaitable[Any]]] = {
        "proxy_service": lambda c: c.proxy_service("web", "/", namespace="ns", port="../x"),
    }
    assert await _refused(calls, "port") == []
    assert proxy_path("services", "ns", "web", port="http") == (
        "/api/v1/namespaces/ns/services/web:http/proxy/"
    )


async def _sent(call: Callable[[AsyncClient], Awaitable[Any]]) -> list[tuple[str, str]]:
    async with loopback(_answer) as server:
        async with AsyncClient(ClientConfig(server=server.url, rate_limit=None)) as client:
            await call(client)
        return [(r.method, r.target) for r in server.requests if r.target != "/api/v1"]


def _segments(target: str) -> list[str]:
    path = target.split("?")[0]
    assert "#" not in target
    return [urllib.parse.unquote(part) for part in path.split("/")]


async def test_question_mark_and_hash_are_escaped_inside_their_segment() -> None:
    # delete("settings", namespace="victim?") deleted the Namespace "victim".
    sent = await _sent(lambda c: c.delete(CM, "settings", namespace="victim?"))
    assert sent == [("DELETE", "/api/v1/namespaces/victim%3F/configmaps/settings")]
    assert _segments(sent[0][1])[4] == "victim?"
    # "#" dropped the query, and the dry run with it: the patch was really written.
    sent = await _sent(lambda c: c.patch(CM, "a#b", {}, namespace="n#s", dry_run=True))
    assert sent == [("PATCH", "/api/v1/namespaces/n%23s/configmaps/a%23b?dryRun=All")]
    assert _segments(sent[0][1])[4:] == ["n#s", "configmaps", "a#b"]
    sent = await _sent(lambda c: c.get(CM, "x?y", namespace="ns", subresource="st#tus"))
    assert sent == [("GET", "/api/v1/namespaces/ns/configmaps/x%3Fy/st%23tus")]
    sent = await _sent(lambda c: c.pods.log("w?b", namespace="n#s", container="c"))
    assert sent == [("GET", "/api/v1/namespaces/n%23s/pods/w%3Fb/log?container=c")]
    # What is a plain path character stays as it is (RBAC names have colons).
    sent = await _sent(lambda c: c.get(CM, "system:node:a@b", namespace="ns"))
    assert sent == [("GET", "/api/v1/namespaces/ns/configmaps/system:node:a@b")]


def test_the_message_names_the_argument_the_value_the_verb_and_the_resource() -> None:
    res = APIResource(group="", version="v1", name="configmaps", kind="ConfigMap", namespaced=True)
    with pytest.raises(InvalidPathSegmentError) as info:
        res.object_path("../../kube-system/secrets/x%6E", namespace="tenant", verb="delete")
    err = info.value
    assert str(err) == (
        "delete configmaps: invalid name '../../kube-system/secrets/x%6E': may not contain '/'; "
        "may not contain '%' (nothing was sent)"
    )
    assert (err.argument, err.verb, err.resource) == ("name", "delete", "configmaps")
    assert isinstance(err, ValueError)
    assert isinstance(err, KubectrlError)
    assert not err.retryable
    with pytest.raises(InvalidPathSegmentError, match=r"invalid name '': may not be empty"):
        res.object_path("", namespace="ns", verb="delete")
    with pytest.raises(InvalidPathSegmentError, match=r"invalid name None"):
        res.object_path(None, namespace="ns", verb="get")  # type: ignore[arg-type]
    with pytest.raises(InvalidPathSegmentError, match=r"get configmaps: invalid namespace 'a/b'"):
        res.path(namespace="a/b", verb="get")
    with pytest.raises(InvalidPathSegmentError, match=r"a subresource \('status'\) is of one"):
        res.path(namespace="ns", subresource="status", verb="get")
    with pytest.raises(InvalidPathSegmentError, match=r"invalid group '\.\.'"):
        resource_path(group="..", version="v1", resource="x", verb="list")
    with pytest.raises(InvalidPathSegmentError, match=r"invalid resource 'a/b'"):
        resource_path(group="", version="v1", resource="a/b", verb="list")


async def test_discovery_of_a_crafted_group_is_refused_before_sending() -> None:
    calls: dict[str, Callable[[AsyncClient], Awaitable[Any]]] = {
        "get": lambda c: c.get(("../../api/v1/namespaces/kube-system/secrets/x", "K"), "n"),
    }
    assert await _refused(calls, "group") == []


def test_the_blocking_client_refuses_before_sending() -> None:
    async def serve() -> list[str]:
        async with loopback(_answer) as server:

            def call() -> None:
                config = ClientConfig(server=server.url, rate_limit=None)
                with BlockingClient(config) as client:
                    bad = "../../kube-system/secrets/admin-toke%6E"
                    for label, attempt in {
                        "get": lambda: client.get(CM, bad, namespace="tenant"),
                        "get empty": lambda: client.get(CM, "", namespace="tenant"),
                        "patch": lambda: client.patch(CM, bad, {}, namespace="tenant"),
                        "delete": lambda: client.delete(CM, bad, namespace="tenant"),
                        "delete empty": lambda: client.delete(CM, "", namespace="tenant"),
                        "update": lambda: client.update(_cm(bad)),
                        "apply": lambda: client.apply(_cm(bad), field_manager="t"),
                        "list": lambda: client.list(CM, namespace="a/b"),
                        "list_pages": lambda: next(iter(client.list_pages(CM, namespace=".."))),
                        "watch": lambda: client.watch(CM, namespace=".."),
                        "delete_collection": lambda: client.delete_collection(CM, namespace=".."),
                        "status().update": lambda: client.status().update(_cm(bad)),
                        "subresource": lambda: client.subresource("scale").get(DEPLOY, bad),
                        "exec": lambda: client.pods.exec(bad, ["ls"], namespace="ns"),
                        "open_exec": lambda: client.pods.open_exec(
                            bad, ["ls"], namespace="ns"
                        ).__enter__(),
                        "attach": lambda: client.pods.attach(bad, namespace="ns").__enter__(),
                        "port_forward": lambda: client.pods.port_forward(bad, 80, namespace="ns"),
                        "log": lambda: client.pods.log(bad, namespace="ns"),
                        "log_stream": lambda: next(iter(client.pods.log_stream(bad))),
                        "evict": lambda: client.pods.evict(bad, namespace="ns"),
                        "add_ephemeral_container": lambda: client.pods.add_ephemeral_container(
                            bad, {"name": "d", "image": "busybox"}, namespace="ns"
                        ),
                        "create_token": lambda: client.create_token(bad, namespace="ns"),
                        "pods.proxy": lambda: client.pods.proxy(bad, namespace="ns"),
                    }.items():
                        try:
                            attempt()
                        except InvalidPathSegmentError:
                            continue
                        pytest.fail(f"{label} was not refused")

            await asyncio.to_thread(call)
            return [r.target for r in server.requests]

    assert asyncio.run(serve()) == []


async def test_the_cached_client_refuses_before_reading_or_sending() -> None:
    bad = "../../kube-system/secrets/admin-toke%6E"
    async with loopback(_answer) as server:
        async with AsyncClient(ClientConfig(server=server.url, rate_limit=None)) as api:
            client = CachedClient(api, InformerFactory(api), sync_timeout=1.0)
            calls: dict[str, Callable[[], Awaitable[Any]]] = {
                "get": lambda: client.get(CM, bad, namespace="tenant"),
                "get empty": lambda: client.get(CM, "", namespace="tenant"),
                "get namespace": lambda: client.get(CM, "x", namespace=".."),
                "list": lambda: client.list(CM, namespace="a/b"),
                "patch": lambda: client.patch(CM, bad, {}, namespace="tenant"),
                "delete": lambda: client.delete(CM, bad, namespace="tenant"),
                "delete empty": lambda: client.delete(CM, "", namespace="tenant"),
                "update": lambda: client.update(_cm(bad)),
                "apply": lambda: client.apply(_cm(bad), field_manager="t"),
                "delete_collection": lambda: client.delete_collection(CM, namespace=".."),
                "status().patch": lambda: client.status().patch(CM, bad, {}, namespace="ns"),
            }
            for label, call in calls.items():
                try:
                    await call()
                except InvalidPathSegmentError:
                    continue
                pytest.fail(f"{label} was not refused")
        assert [r.target for r in server.requests] == []


def test_the_error_pickles() -> None:
    import pickle

    err = InvalidPathSegmentError("name", "..", ["may not be '..'"], verb="get", resource="x")
    clone = pickle.loads(pickle.dumps(err))
    assert (str(clone), clone.argument, clone.value, clone.verb) == (str(err), "name", "..", "get")
    assert json.dumps(clone.problems) == "[\"may not be '..'\"]"
