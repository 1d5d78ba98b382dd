"""TokenRequest (``serviceaccounts/<name>/token``): what the apiserver answers and what its
token says.

Upstream: pkg/registry/core/serviceaccount/storage/token.go (defaults, the service account and
bound object lookups, the uid check, "cannot bind token ..." refusals),
pkg/apis/authentication/validation (expirationSeconds between 10 minutes and 2^32 s) and
pkg/serviceaccount/claims.go (the claims). The plain control plane of the contract suite
issues tokens as ``https://kubernetes.default.svc.cluster.local``, the fake's issuer too.
"""

from __future__ import annotations

import base64
import json
from typing import Any

import pytest
from contract_helpers import Target, unique

from kubectrl.errors import APIError, BadRequestError, ConflictError, InvalidError, NotFoundError

ISSUER = "https://kubernetes.default.svc.cluster.local"


def _claims(token: str) -> dict[str, Any]:
    payload = token.split(".")[1]
    claims: dict[str, Any] = json.loads(
        base64.urlsafe_b64decode(payload + "=" * (-len(payload) % 4))
    )
    return claims


async def _account(target: Target) -> tuple[str, dict[str, Any]]:
    name = unique("sa")
    sa = await target.client.create(
        {
            "apiVersion": "v1",
            "kind": "ServiceAccount",
            "metadata": {"name": name, "namespace": target.namespace},
        }
    )
    return name, sa


async def test_a_token_for_the_issuers_audience_by_default(target: Target) -> None:
    name, sa = await _account(target)
    token = await target.client.create_token(name, namespace=target.namespace)
    raw = token.raw
    assert raw["metadata"]["name"] == name
    assert raw["metadata"]["uid"] == sa["metadata"]["uid"]
    assert raw["spec"] == {"audiences": [ISSUER], "expirationSeconds": 3600, "boundObjectRef": None}
    claims = _claims(token.token)
    assert claims["exp"] - claims["iat"] == 3600
    assert claims["nbf"] == claims["iat"]
    assert int(token.expiration.timestamp()) == claims["exp"]
    assert {k: v for k, v in claims.items() if k not in ("exp", "iat", "nbf", "jti")} == {
        "aud": [ISSUER],
        "iss": ISSUER,
        "kubernetes.io": {
            "namespace": target.namespace,
            "serviceaccount": {"name": name, "uid": sa["metadata"]["uid"]},
        },
        "sub": f"system:serviceaccount:{target.namespace}:{name}",
    }
    assert len(claims["jti"]) == 36  # a UUID


async def test_audiences_and_expiration_as_asked(target: Target) -> None:
    name, _ = await _account(target)
    token = await target.client.create_token(
        name, namespace=target.namespace, audiences=["vault", "x"], expiration_seconds=700
    )
    assert token.audiences == ("vault", "x")
    claims = _claims(token.token)
    assert claims["aud"] == ["vault", "x"]
    assert claims["exp"] - claims["iat"] == 700


@pytest.mark.parametrize(
    ("seconds", "detail"),
    [
        (599, "may not specify a duration less than 10 minutes"),
        (2**33, "may not specify a duration larger than 2^32 seconds"),
    ],
)
async def test_an_expiration_out_of_bounds_is_invalid(
    target: Target, seconds: int, detail: str
) -> None:
    name, _ = await _account(target)
    with pytest.raises(InvalidError) as caught:
        await target.client.create_token(
            name, namespace=target.namespace, expiration_seconds=seconds
        )
    assert [(c.field, c.message) for c in caught.value.causes] == [
        ("spec.expirationSeconds", f"Invalid value: {seconds}: {detail}")
    ]


async def test_a_missing_service_account_is_not_found(target: Target) -> None:
    with pytest.raises(NotFoundError):
        await target.client.create_token(unique("nosa"), namespace=target.namespace)


async def _pod(target: Target, account: str) -> dict[str, Any]:
    return await target.client.create(
        {
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {"name": unique("pod"), "namespace": target.namespace},
            "spec": {
                "serviceAccountName": account,
                "containers": [{"name": "a", "image": "busybox"}],
            },
        }
    )


async def test_a_token_bound_to_a_pod_names_it(target: Target) -> None:
    name, _ = await _account(target)
    pod = await _pod(target, name)
    meta = pod["metadata"]
    bound = {"apiVersion": "v1", "kind": "Pod", "name": meta["name"], "uid": meta["uid"]}
    token = await target.client.create_token(name, namespace=target.namespace, bound_object=bound)
    assert token.raw["spec"]["boundObjectRef"] == bound
    assert _claims(token.token)["kubernetes.io"]["pod"] == {
        "name": meta["name"],
        "uid": meta["uid"],
    }


@pytest.mark.parametrize("case", ["wrong-uid", "missing-pod", "configmap", "other-account"])
async def test_a_bound_object_the_server_refuses(target: Target, case: str) -> None:
    name, _ = await _account(target)
    other, _ = await _account(target)
    pod = await _pod(target, other if case == "other-account" else name)
    bound: dict[str, Any] = {"apiVersion": "v1", "kind": "Pod", "name": pod["metadata"]["name"]}
    expected: type[APIError] = BadRequestError
    if case == "wrong-uid":
        bound["uid"], expected = "not-the-uid", ConflictError
    elif case == "missing-pod":
        bound["name"], expected = unique("nopod"), NotFoundError
    elif case == "configmap":
        bound["kind"] = "ConfigMap"
    with pytest.raises(expected) as caught:
        await target.client.create_token(name, namespace=target.namespace, bound_object=bound)
    if case == "configmap":
        assert (
            caught.value.server_message == "cannot bind token to object of type /v1, Kind=ConfigMap"
        )
    if case == "other-account":
        assert caught.value.server_message == (
            f'cannot bind token for serviceaccount "{name}" to pod running with different '
            "serviceaccount name."
        )
