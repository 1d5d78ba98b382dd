"""Admission handlers registered on an operator (kopf's ``@kopf.on.validate`` and
``@kopf.on.mutate``), served by the manager's :class:`~kubectrl.webhook.WebhookServer`.

Semantics follow kopf's ``kopf/_core/engines/admission.py`` and ``docs/admission.rst``: every
matching handler of the kind is called with the object's keyword arguments plus ``old``,
``new``, ``operation``, ``subresource``, ``dryrun``, ``userinfo``, ``warnings`` (a list the
handler appends to) and, for mutating handlers, ``patch`` (a merge patch the handler fills);
a :class:`~kubectrl.webhook.Denied` (kopf's ``AdmissionError``) refuses the request with its
code, any other exception refuses it with code 500. Without ``subresource=`` a handler sees only
requests for the object itself; ``subresource="*"`` sees every one.
"""

from __future__ import annotations

import dataclasses
import logging
from collections.abc import Callable, Mapping, Sequence
from typing import Any, Protocol

from kubectrl.operator._filters import MetaFilter, meta_matches
from kubectrl.operator._kwargs import call_handler, object_kwargs
from kubectrl.webhook import AdmissionRequest, AdmissionResponse, Denied

__all__ = ["AdmissionDispatch", "AdmissionHandlerDef"]

log = logging.getLogger("kubectrl.operator")

_OPERATIONS = ("CREATE", "UPDATE", "DELETE", "CONNECT")


@dataclasses.dataclass
class AdmissionHandlerDef:
    """One ``on_validate``/``on_mutate`` handler and its filters."""

    fn: Callable[..., Any]
    id: str
    operations: tuple[str, ...]
    subresource: str | None
    labels: MetaFilter | None
    annotations: MetaFilter | None
    when: Callable[..., Any] | None


def check_operations(operations: Sequence[str] | None) -> tuple[str, ...]:
    """The operations a handler filters on (all by default); an unknown one is a ValueError."""
    if operations is None:
        return _OPERATIONS
    if isinstance(operations, str):
        raise TypeError(f"operations must be a sequence of names, not the string {operations!r}")
    unknown = [op for op in operations if op not in _OPERATIONS]
    if unknown or not operations:
        raise ValueError(
            f"operations must be some of {', '.join(_OPERATIONS)}, not {list(operations)!r}"
        )
    return tuple(operations)


class _Owner(Protocol):
    """What the dispatch reads from its operator."""

    memo: Any

    def indexes(self) -> Mapping[str, Any]: ...


class AdmissionDispatch:
    """The admission handler the operator registers for one kind and one webhook type
    (``mutating`` or ``validating``): it calls the operator's handlers of that kind."""

    def __init__(self, operator: _Owner, mutating: bool) -> None:
        self._operator = operator
        self.mutating = mutating
        self.handlers: list[AdmissionHandlerDef] = []

    def _matches(self, handler: AdmissionHandlerDef, req: AdmissionRequest, obj: Any) -> bool:
        if req.operation not in handler.operations:
            return False
        if handler.subresource != "*" and (handler.subresource or "") != req.sub_resource:
            return False
        meta = obj.get("metadata") or {}
        return meta_matches(handler.labels, meta.get("labels") or {}) and meta_matches(
            handler.annotations, meta.get("annotations") or {}
        )

    async def handle(self, req: AdmissionRequest) -> AdmissionResponse:
        """Call every matching handler; the first refusal answers, else admit (with the
        mutating handlers' patches as a JSON patch)."""
        obj: dict[str, Any] = req.object if req.object is not None else (req.old_object or {})
        warnings: list[str] = []
        merged: dict[str, Any] = {}
        for handler in self.handlers:
            if not self._matches(handler, req, obj):
                continue
            kwargs = {
                **object_kwargs(obj),
                **self._operator.indexes(),
                "old": req.old_object,
                "new": req.object,
                "operation": req.operation,
                "subresource": req.sub_resource or None,
                "dryrun": req.dry_run,
                "userinfo": dict(req.user_info),
                "warnings": warnings,
                "memo": self._operator.memo,
            }
            if handler.when is not None and not await call_handler(handler.when, **kwargs):
                continue
            patch: dict[str, Any] = {}
            try:
                await call_handler(handler.fn, **kwargs, patch=patch)
            except Denied as err:
                return AdmissionResponse.denied(
                    err.message, err.code, warnings=[*warnings, *err.warnings]
                )
            except Exception as err:
                log.exception("admission handler %s failed on %s", handler.id, req.object_name)
                return AdmissionResponse.denied(
                    f"{type(err).__name__}: {err}", 500, warnings=warnings
                )
            if self.mutating and patch:
                _merge_into(merged, patch)
        if self.mutating and merged and req.object is not None:
            return AdmissionResponse.patched(
                req.object, _merge_patched(req.object, merged), warnings=warnings
            )
        return AdmissionResponse.allowed(warnings=warnings)


def _merge_into(base: dict[str, Any], extra: Mapping[str, Any]) -> None:
    for key, value in extra.items():
        current = base.get(key)
        if isinstance(value, Mapping) and isinstance(current, dict):
            _merge_into(current, value)
        else:
            base[key] = dict(value) if isinstance(value, Mapping) else value


def _merge_patched(obj: Mapping[str, Any], patch: Mapping[str, Any]) -> dict[str, Any]:
    """``obj`` with the JSON merge patch ``patch`` applied (RFC 7386: ``None`` removes)."""
    result = dict(obj)
    for key, value in patch.items():
        if value is None:
            result.pop(key, None)
        elif isinstance(value, Mapping):
            current = result.get(key)
            result[key] = _merge_patched(current if isinstance(current, Mapping) else {}, value)
        else:
            result[key] = value
    return result
