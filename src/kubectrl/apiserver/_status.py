"""``Status`` bodies shaped exactly like the kube-apiserver's (``k8s.io/apimachinery`` errors).

Each builder returns ``(code, body)``; :class:`StatusError` carries one through the API core's
request handling to the HTTP response.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

__all__ = ["FeatureNotImplementedError", "StatusError", "status_body"]

_REASONS = {
    400: "BadRequest",
    401: "Unauthorized",
    403: "Forbidden",
    404: "NotFound",
    405: "MethodNotAllowed",
    406: "NotAcceptable",
    409: "Conflict",
    410: "Expired",
    415: "UnsupportedMediaType",
    422: "Invalid",
    429: "TooManyRequests",
    500: "InternalError",
    503: "ServiceUnavailable",
    504: "Timeout",
}


class FeatureNotImplementedError(NotImplementedError):
    """The API core does not implement a feature the request asked for; ``feature`` names it.

    The core raises it rather than silently doing something the real apiserver would not; who
    serves the core shows it its own way (``FakeAPI`` raises
    :class:`~kubectrl.testing.UnsupportedFeatureError` to the test).

    Example::

        >>> FeatureNotImplementedError("server-side apply to the scale subresource").feature
        'server-side apply to the scale subresource'
    """

    def __init__(self, feature: str) -> None:
        super().__init__(f"the API core does not implement {feature}")
        self.feature = feature


def status_body(
    code: int,
    message: str,
    *,
    reason: str | None = None,
    details: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    """A failure ``Status`` dict (``details`` keys left out when empty, as ``omitempty`` does).

    Example::

        >>> body = status_body(404, 'configmaps "x" not found', details={"name": "x"})
        >>> body["reason"], body["code"], body["details"]
        ('NotFound', 404, {'name': 'x'})
    """
    body: dict[str, Any] = {
        "kind": "Status",
        "apiVersion": "v1",
        "metadata": {},
        "status": "Failure",
        "message": message,
    }
    body["reason"] = reason if reason is not None else _REASONS.get(code, "")
    if not body["reason"]:
        del body["reason"]
    clean = {k: v for k, v in (details or {}).items() if v not in (None, "", [], {})}
    if clean:
        body["details"] = clean
    body["code"] = code
    return body


class StatusError(Exception):
    """A failure answer: HTTP ``code`` and its ``Status`` body."""

    def __init__(self, code: int, body: dict[str, Any]) -> None:
        super().__init__(body.get("message", ""))
        self.code = code
        self.body = body
        #: The ``Warning`` texts of the answer (admission's, given before the refusal).
        self.warnings: tuple[str, ...] = ()

    @classmethod
    def make(
        cls,
        code: int,
        message: str,
        *,
        reason: str | None = None,
        details: Mapping[str, Any] | None = None,
    ) -> StatusError:
        """Build one from the :func:`status_body` arguments."""
        return cls(code, status_body(code, message, reason=reason, details=details))


def qualified(plural: str, group: str) -> str:
    """``configmaps`` or ``deployments.apps``: how the apiserver names a resource in messages."""
    return f"{plural}.{group}" if group else plural


def not_found(plural: str, group: str, name: str) -> StatusError:
    """404 ``<resource> "<name>" not found``."""
    return StatusError.make(
        404,
        f'{qualified(plural, group)} "{name}" not found',
        details={"name": name, "group": group, "kind": plural},
    )


def already_exists(plural: str, group: str, name: str) -> StatusError:
    """409 AlreadyExists ``<resource> "<name>" already exists``."""
    return StatusError.make(
        409,
        f'{qualified(plural, group)} "{name}" already exists',
        reason="AlreadyExists",
        details={"name": name, "group": group, "kind": plural},
    )


def conflict(plural: str, group: str, name: str, why: str) -> StatusError:
    """409 Conflict ``Operation cannot be fulfilled on <resource> "<name>": <why>``."""
    return StatusError.make(
        409,
        f'Operation cannot be fulfilled on {qualified(plural, group)} "{name}": {why}',
        details={"name": name, "group": group, "kind": plural},
    )


MODIFIED = (
    "the object has been modified; please apply your changes to the latest version and try again"
)


def invalid(
    kind: str, group: str, name: str, causes: Sequence[tuple[str, str, str]]
) -> StatusError:
    """422 Invalid; ``causes`` are ``(type, field, message)`` like ``field.Error``."""
    qualified_kind = f"{kind}.{group}" if group else kind
    texts = [f"{field}: {message}" for _, field, message in causes]
    joined = texts[0] if len(texts) == 1 else "[" + ", ".join(texts) + "]"
    return StatusError.make(
        422,
        f'{qualified_kind} "{name}" is invalid: {joined}',
        details={
            "name": name,
            "group": group,
            "kind": kind,
            "causes": [
                {"reason": reason, "message": message, "field": field}
                for reason, field, message in causes
            ],
        },
    )


def bad_request(message: str) -> StatusError:
    """400 BadRequest."""
    return StatusError.make(400, message)
