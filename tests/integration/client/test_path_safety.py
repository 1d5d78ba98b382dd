"""On the real kube-apiserver: a crafted name, namespace or subresource never reaches another
object.

Before the fix, ``get/patch/delete(("v1", "ConfigMap"), "../../<ns>/secrets/admin-toke%6E",
namespace="tenant")`` read, labelled and deleted a Secret (httpx removes dot segments, the server
decodes ``%6E``); ``delete(..., "")`` deleted the whole collection; a ``?`` in a namespace cut
the path and a ``#`` dropped the query (and its ``dryRun``); the pod verbs built their own paths.

The refusal rules are apimachinery ``pkg/api/validation/path/name.go``
(``IsValidPathSegmentName``) as client-go's ``rest/request.go`` applies them (``Name``,
``Namespace``, ``SubResource``: an empty name and an invalid segment fail the request before it
is sent); ``?`` and ``#`` are percent-encoded and stay in their segment, as in client-go's URL.
"""

from __future__ import annotations

import base64
from collections.abc import Awaitable, Callable
from typing import Any

import pytest

from kubectrl.client import AsyncClient
from kubectrl.errors import InvalidPathSegmentError, NotFoundError

pytestmark = pytest.mark.integration

CM = ("v1", "ConfigMap")
SECRET = ("v1", "Secret")
Call = Callable[[AsyncClient, str], Awaitable[Any]]


async def _secret(client: AsyncClient, ns: str) -> dict[str, Any]:
    secret = {
        "apiVersion": "v1",
        "kind": "Secret",
        "metadata": {"name": "admin-token", "namespace": ns},
        "data": {"token": base64.b64encode(b"s3cret").decode()},
    }
    return dict(await client.create(secret))


async def _untouched(client: AsyncClient, ns: str, before: dict[str, Any]) -> None:
    after = await client.get(SECRET, "admin-token", namespace=ns)
    assert after["metadata"]["resourceVersion"] == before["metadata"]["resourceVersion"]
    assert "labels" not in after["metadata"]


def _traversal(ns: str) -> list[str]:
    # From namespace "tenant" to the Secret; and the bare forms client-go refuses.
    return [f"../../{ns}/secrets/admin-toke%6E", f"../../{ns}/secrets/admin-token", "..", "."]


TRAVERSAL_VERBS: dict[str, Callable[[AsyncClient, str], Awaitable[Any]]] = {
    "get": lambda c, name: c.get(CM, name, namespace="tenant"),
    "patch": lambda c, name: c.patch(
        CM, name, {"metadata": {"labels": {"pwned": "yes"}}}, namespace="tenant"
    ),
    "delete": lambda c, name: c.delete(CM, name, namespace="tenant"),
}


@pytest.mark.parametrize("verb", list(TRAVERSAL_VERBS))
async def test_a_traversal_name_from_another_namespace_is_refused(
    client: AsyncClient, kubectrl_namespace: str, verb: str
) -> None:
    before = await _secret(client, kubectrl_namespace)
    for name in _traversal(kubectrl_namespace):
        with pytest.raises(InvalidPathSegmentError, match=r"invalid name") as info:
            await TRAVERSAL_VERBS[verb](client, name)
        assert (info.value.argument, info.value.verb) == ("name", verb)
    await _untouched(client, kubectrl_namespace, before)


async def test_an_empty_name_never_addresses_the_collection(
    client: AsyncClient, kubectrl_namespace: str
) -> None:
    ns = kubectrl_namespace
    for i in range(3):
        await client.create(
            {
                "apiVersion": "v1",
                "kind": "ConfigMap",
                "metadata": {"name": f"keep-{i}", "namespace": ns, "labels": {"set": "path"}},
            }
        )
    for call in (
        lambda: client.delete(CM, "", namespace=ns),
        lambda: client.get(CM, "", namespace=ns),
        lambda: client.patch(CM, "", {"metadata": {"labels": {"x": "y"}}}, namespace=ns),
    ):
        with pytest.raises(InvalidPathSegmentError, match=r"invalid name '': may not be empty"):
            await call()
    left = await client.list(CM, namespace=ns, label_selector={"set": "path"})
    assert sorted(i["metadata"]["name"] for i in left["items"]) == ["keep-0", "keep-1", "keep-2"]
    assert all("x" not in (i["metadata"].get("labels") or {}) for i in left["items"])


async def test_question_mark_and_hash_stay_inside_their_segment(
    client: AsyncClient, kubectrl_namespace: str
) -> None:
    ns = kubectrl_namespace
    # Before: DELETE /api/v1/namespaces/<ns>?/configmaps/settings deleted the Namespace.
    with pytest.raises(NotFoundError, match=r'configmaps "settings" not found'):
        await client.delete(CM, "settings", namespace=f"{ns}?")
    # Before: the "#" dropped "?dryRun=All" and the Namespace itself was patched for real.
    with pytest.raises(NotFoundError):
        await client.patch(
            CM, "settings", {"metadata": {"labels": {"x": "y"}}}, namespace=f"{ns}#", dry_run=True
        )
    namespace = await client.get(("v1", "Namespace"), ns)
    assert namespace["status"]["phase"] == "Active"
    assert "x" not in namespace["metadata"]["labels"]
    # And such a name is the object's own: a Role may be named so, and is found by it.
    role = {
        "apiVersion": "rbac.authorization.k8s.io/v1",
        "kind": "Role",
        "metadata": {"name": "r?x#y z", "namespace": ns},
        "rules": [],
    }
    await client.create(role)
    got = await client.get(("rbac.authorization.k8s.io/v1", "Role"), "r?x#y z", namespace=ns)
    assert got["metadata"]["name"] == "r?x#y z"


@pytest.mark.parametrize("subresource", ["../../secrets/admin-token", "..", "a/b", "x%2F"])
async def test_a_traversal_subresource_is_refused(
    client: AsyncClient, kubectrl_namespace: str, subresource: str
) -> None:
    ns = kubectrl_namespace
    before = await _secret(client, ns)
    await client.create(
        {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c", "namespace": ns}}
    )
    calls = [
        lambda: client.get(CM, "c", namespace=ns, subresource=subresource),
        lambda: client.subresource(subresource).patch(
            CM, "c", {"metadata": {"labels": {"pwned": "yes"}}}, namespace=ns
        ),
    ]
    for call in calls:
        with pytest.raises(InvalidPathSegmentError, match=r"invalid subresource"):
            await call()
    await _untouched(client, ns, before)


async def test_the_pod_verbs_refuse_a_traversal_pod_name(
    client: AsyncClient, kubectrl_namespace: str
) -> None:
    ns = kubectrl_namespace
    before = await _secret(client, ns)
    victim = await client.create(
        {
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {"name": "victim", "namespace": ns},
            "spec": {"containers": [{"name": "app", "image": "busybox"}]},
        }
    )
    pod = f"../../{ns}/pods/victi%6D"
    secret = f"../../{ns}/secrets/admin-toke%6E"

    async def port_forward() -> None:
        async with client.pods.port_forward(pod, 80, namespace="tenant"):
            pass

    async def open_exec() -> None:
        async with client.pods.open_exec(pod, ["sh"], namespace="tenant"):
            pass

    calls: dict[str, Callable[[], Awaitable[Any]]] = {
        "add_ephemeral_container": lambda: client.pods.add_ephemeral_container(
            pod, {"name": "debug", "image": "busybox"}, namespace="tenant"
        ),
        "evict": lambda: client.pods.evict(pod, namespace="tenant"),
        "exec": lambda: client.pods.exec(pod, ["true"], namespace="tenant"),
        "open_exec": open_exec,
        "attach": lambda: client.pods.attach(pod, namespace="tenant").__aenter__(),
        "port_forward": port_forward,
        "log": lambda: client.pods.log(pod, namespace="tenant"),
        "create_token": lambda: client.create_token(secret, namespace="tenant"),
        "pods.proxy": lambda: client.pods.proxy(pod, "/", namespace="tenant"),
        "proxy_service path": lambda: client.proxy_service(
            "web", f"../../../../{ns}/secrets/admin-token", namespace=ns
        ),
    }
    for label, call in calls.items():
        try:
            await call()
        except InvalidPathSegmentError:
            continue
        pytest.fail(f"{label} was not refused")
    after = await client.get(("v1", "Pod"), "victim", namespace=ns)
    assert after["metadata"]["resourceVersion"] == victim["metadata"]["resourceVersion"]
    assert not after["spec"].get("ephemeralContainers")
    await _untouched(client, ns, before)
