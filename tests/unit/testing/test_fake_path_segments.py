"""The FakeAPI answers a name that is not one path segment as the real apiserver does.

kubectrl's clients refuse such names before sending (tests/unit/client/test_path_segments.py);
these requests are written by hand, escaped, as another client could send them. What the real
kube-apiserver answered (tests/integration/client/test_path_safety.py checks it):

* a name the server decodes to ``.`` or ``..`` or that holds ``%`` (``%2e%2e``, ``a%25``): 400
  BadRequest ``Name parameter invalid: "..": may not be '..'``, from the registry's key function
  (apiserver ``pkg/registry/generic/registry/store.go``, ``NamespaceKeyFunc`` and
  ``NoNamespaceKeyFunc``, with apimachinery ``pkg/api/validation/path/name.go``'s
  ``IsValidPathSegmentName``), for get, delete, patch and a subresource alike;
* a ``%2F`` is decoded before routing, so ``a%2Fb`` is ``a`` with a subresource ``b``: 404
  ``the server could not find the requested resource``;
* ``%3F``/``%23`` are the name's own characters: ``a%3Fb`` is the object ``a?b``.
"""

from __future__ import annotations

from typing import Any

import httpx
import pytest

from kubectrl.testing import FakeAPI

CM = "/api/v1/namespaces/ns/configmaps"


async def _send(api: FakeAPI, method: str, path: str, body: Any = None) -> httpx.Response:
    headers = {"Content-Type": "application/merge-patch+json"} if method == "PATCH" else {}
    async with httpx.AsyncClient(transport=api.transport, base_url="https://fake") as http:
        return await http.request(
            method, httpx.URL("https://fake" + path), json=body, headers=headers
        )


@pytest.mark.parametrize(
    ("method", "path", "message"),
    [
        ("GET", f"{CM}/%2e%2e", "Name parameter invalid: \"..\": may not be '..'"),
        ("GET", f"{CM}/%2E", "Name parameter invalid: \".\": may not be '.'"),
        ("DELETE", f"{CM}/%2e", "Name parameter invalid: \".\": may not be '.'"),
        ("PATCH", f"{CM}/x%25y", "Name parameter invalid: \"x%y\": may not contain '%'"),
        (
            "GET",
            "/apis/apps/v1/namespaces/ns/deployments/x%25y/status",
            "Name parameter invalid: \"x%y\": may not contain '%'",
        ),
        (
            "GET",
            "/apis/rbac.authorization.k8s.io/v1/clusterroles/a%25",
            "Name parameter invalid: \"a%\": may not contain '%'",
        ),
    ],
)
async def test_a_name_that_is_not_one_segment_is_a_bad_request(
    method: str, path: str, message: str
) -> None:
    api = FakeAPI()
    api.seed({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "ns"}})
    response = await _send(api, method, path, {} if method == "PATCH" else None)
    assert response.status_code == 400, response.text
    assert response.json()["reason"] == "BadRequest"
    assert response.json()["message"] == message


async def test_an_escaped_slash_splits_the_path_and_other_escapes_stay_in_the_name() -> None:
    api = FakeAPI()
    api.seed(
        {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "ns"}},
        {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "a", "namespace": "ns"}},
    )
    response = await _send(api, "GET", f"{CM}/a%2Fb")
    assert response.status_code == 404
    assert response.json()["message"] == "the server could not find the requested resource"
    response = await _send(api, "GET", f"{CM}/a%3Fb")
    assert response.status_code == 404
    assert response.json()["message"] == 'configmaps "a?b" not found'


async def test_the_pods_subresources_and_tokens_refuse_such_a_name_too() -> None:
    # The real apiserver: GET pods/%2e%2e/log is the same 400.
    api = FakeAPI()
    api.seed({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "ns"}})
    for method, path in [
        ("GET", "/api/v1/namespaces/ns/pods/%2e%2e/log"),
        ("POST", "/api/v1/namespaces/ns/pods/a%25/eviction"),
        ("POST", "/api/v1/namespaces/ns/serviceaccounts/%2e/token"),
    ]:
        response = await _send(api, method, path, {} if method == "POST" else None)
        assert response.status_code == 400, (path, response.text)
        assert response.json()["message"].startswith("Name parameter invalid: "), path
