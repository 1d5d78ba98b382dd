"""What FakeAPI answers to a ``TokenRequest`` (``serviceaccounts/<name>/token``).

As the apiserver's token registry does it (``pkg/registry/core/serviceaccount/storage/
token.go``, checked side by side with a real apiserver in ``tests/contract``): the request's
``expirationSeconds`` defaults to an hour and must be between ten minutes and 2^32 seconds, an
empty ``audiences`` becomes the issuer's, ``metadata.name`` if given must be the service
account's, and ``boundObjectRef`` binds the token to a Pod (running as that service account) or
a Secret of the namespace, whose ``uid`` must match when given. The token is a JWT with the
claims the apiserver puts in one (``iss``, ``sub``, ``aud``, ``exp``, ``iat``, ``nbf``, ``jti``
and the ``kubernetes.io`` namespace, service account, pod, secret and node), signed HS256 with a
key of the fake's own: clients treat tokens as opaque, and nothing but the fake could verify one
anyway.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import secrets
import uuid
from collections.abc import Callable, Mapping
from datetime import datetime, timedelta, timezone
from typing import Any

from kubectrl.apiserver.inprocess import status_body
from kubectrl.errors import UnsupportedFeatureError

__all__ = ["ISSUER", "TokenIssuer", "failure"]

#: The issuer (and default audience) of the fake's tokens: what clusters made by kubeadm, and
#: kubectrl's envtest, use.
ISSUER = "https://kubernetes.default.svc.cluster.local"
_GROUP = "authentication.k8s.io"


def failure(code: int, reason: str, message: str, **extra: Any) -> dict[str, Any]:
    """A failure ``Status`` body (``details=`` its details), as the pods subresources answer."""
    return status_body(code, message, reason=reason, details=extra.get("details"))


def _invalid(name: str, field: str, value: Any, detail: str) -> tuple[int, dict[str, Any]]:
    message = f"Invalid value: {json.dumps(value)}: {detail}"
    details: dict[str, Any] = {
        "group": _GROUP,
        "kind": "TokenRequest",
        "causes": [{"reason": "FieldValueInvalid", "message": message, "field": field}],
    }
    if name:
        details = {"name": name, **details}
    text = f'TokenRequest.{_GROUP} "{name}" is invalid: {field}: {message}'
    return 422, failure(422, "Invalid", text, details=details)


def _not_found(resource: str, name: str) -> tuple[int, dict[str, Any]]:
    message = f'{resource} "{name}" not found'
    return 404, failure(404, "NotFound", message, details={"name": name, "kind": resource})


def _segment(value: Mapping[str, Any] | bytes) -> str:
    data = value if isinstance(value, bytes) else json.dumps(value, separators=(",", ":")).encode()
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def _fields(spec: Mapping[str, Any]) -> dict[str, Any]:
    """The ``fieldsV1`` of the request's spec (a bound reference is a set pointer: ``.``)."""
    out: dict[str, Any] = {"f:expirationSeconds": {}}
    if spec.get("audiences"):
        out["f:audiences"] = {}
    ref = spec.get("boundObjectRef")
    if isinstance(ref, Mapping):
        out["f:boundObjectRef"] = {".": {}, **{f"f:{key}": {} for key in ref}}
    return {"f:spec": dict(sorted(out.items()))}


class TokenIssuer:
    """Issues the fake's service-account tokens (one signing key per fake)."""

    def __init__(
        self,
        objects: Callable[[str, str | None], list[dict[str, Any]]],
        wall: Callable[[], datetime],
    ) -> None:
        self._objects = objects
        self._wall = wall
        self._key = secrets.token_bytes(32)

    def _find(self, kind: str, namespace: str | None, name: str) -> dict[str, Any] | None:
        for obj in self._objects(kind, namespace):
            if obj.get("metadata", {}).get("name") == name:
                return obj
        return None

    def serve(
        self, namespace: str, name: str, body: bytes, manager: str
    ) -> tuple[int, dict[str, Any]]:
        """The answer to ``POST .../serviceaccounts/<name>/token``."""
        try:
            request = json.loads(body) if body else {}
        except ValueError as err:
            return 400, failure(400, "BadRequest", f"the body could not be decoded: {err}")
        if not isinstance(request, dict):
            return 400, failure(400, "BadRequest", "the body of the request must be a JSON object")
        spec = dict(request.get("spec") or {})
        expiration = spec.get("expirationSeconds")
        expiration = 3600 if expiration is None else expiration
        if not isinstance(expiration, int) or isinstance(expiration, bool):
            return 400, failure(400, "BadRequest", "spec.expirationSeconds must be an integer")
        if expiration < 600:
            detail = "may not specify a duration less than 10 minutes"
            return _invalid("", "spec.expirationSeconds", expiration, detail)
        if expiration > 2**32:
            detail = "may not specify a duration larger than 2^32 seconds"
            return _invalid("", "spec.expirationSeconds", expiration, detail)
        account = self._find("ServiceAccount", namespace, name)
        if account is None:
            return _not_found("serviceaccounts", name)
        given = (request.get("metadata") or {}).get("name")
        if given and given != name:
            detail = "must match the service account name if specified"
            return _invalid(name, "metadata.name", given, detail)
        claims: dict[str, Any] = {
            "namespace": namespace,
            "serviceaccount": {"name": name, "uid": account["metadata"].get("uid", "")},
        }
        ref = spec.get("boundObjectRef")
        if isinstance(ref, Mapping):
            problem = self._bind(namespace, name, ref, claims)
            if problem is not None:
                return problem
        audiences = list(spec.get("audiences") or [ISSUER])
        now = self._wall().astimezone(timezone.utc).replace(microsecond=0)
        expires = now + timedelta(seconds=expiration)
        payload = {
            "aud": audiences,
            "exp": int(expires.timestamp()),
            "iat": int(now.timestamp()),
            "iss": ISSUER,
            "jti": str(uuid.uuid4()),
            "kubernetes.io": dict(sorted(claims.items())),
            "nbf": int(now.timestamp()),
            "sub": f"system:serviceaccount:{namespace}:{name}",
        }
        signed = f"{_segment({'alg': 'HS256', 'typ': 'JWT'})}.{_segment(payload)}"
        signature = hmac.new(self._key, signed.encode(), hashlib.sha256).digest()
        meta = account["metadata"]
        return 201, {
            "kind": "TokenRequest",
            "apiVersion": f"{_GROUP}/v1",
            "metadata": {
                "name": name,
                "namespace": namespace,
                "uid": meta.get("uid", ""),
                "creationTimestamp": meta.get("creationTimestamp"),
                "managedFields": [
                    {
                        "manager": manager,
                        "operation": "Update",
                        "apiVersion": f"{_GROUP}/v1",
                        "time": now.strftime("%Y-%m-%dT%H:%M:%SZ"),
                        "fieldsType": "FieldsV1",
                        "fieldsV1": _fields(spec),
                        "subresource": "token",
                    }
                ],
            },
            "spec": {
                "audiences": audiences,
                "expirationSeconds": expiration,
                "boundObjectRef": dict(ref) if isinstance(ref, Mapping) else None,
            },
            "status": {
                "token": f"{signed}.{_segment(signature)}",
                "expirationTimestamp": expires.strftime("%Y-%m-%dT%H:%M:%SZ"),
            },
        }

    def _bind(
        self, namespace: str, account: str, ref: Mapping[str, Any], claims: dict[str, Any]
    ) -> tuple[int, dict[str, Any]] | None:
        api_version, kind = str(ref.get("apiVersion") or ""), str(ref.get("kind") or "")
        group = api_version.rpartition("/")[0] if "/" in api_version else ""
        version = api_version.rpartition("/")[2]
        name = str(ref.get("name") or "")
        if group == "" and kind == "Node":
            raise UnsupportedFeatureError("a TokenRequest bound to a Node")
        if group != "" or kind not in ("Pod", "Secret"):
            message = f"cannot bind token to object of type {group}/{version}, Kind={kind}"
            return 400, failure(400, "BadRequest", message)
        resource = "pods" if kind == "Pod" else "secrets"
        target = self._find(kind, namespace, name)
        if target is None:
            return _not_found(resource, name)
        if kind == "Pod" and (target.get("spec") or {}).get("serviceAccountName") != account:
            message = (
                f'cannot bind token for serviceaccount "{account}" to pod running with '
                "different serviceaccount name."
            )
            return 400, failure(400, "BadRequest", message)
        uid = target["metadata"].get("uid", "")
        if ref.get("uid") and ref["uid"] != uid:
            message = (
                f'Operation cannot be fulfilled on {kind} "{name}": the UID in the bound object '
                f"reference ({ref['uid']}) does not match the UID in record. The object might "
                "have been deleted and then recreated"
            )
            return 409, failure(409, "Conflict", message, details={"name": name, "kind": kind})
        claims[kind.lower()] = {"name": name, "uid": uid}
        node = (target.get("spec") or {}).get("nodeName") if kind == "Pod" else None
        if node:
            found = self._find("Node", None, node)  # a node not found: its name alone
            claims["node"] = {"name": node}
            if found is not None:
                claims["node"]["uid"] = found["metadata"].get("uid", "")
        return None
