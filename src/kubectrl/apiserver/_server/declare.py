"""What an extension API server serves: resources declared as pydantic models, admission rules
and custom subresources, and the object store that runs the rules.

A resource is a :class:`~kubectrl.resources.CustomResource` subclass (the declaration a CRD is
generated from): the server registers it in the API core as the CRD :func:`kubectrl.crd.generate`
makes of it, so its objects are defaulted, pruned and validated by its schema and served with
the status subresource and printer columns it declares, by the same code that serves CRDs in
:class:`~kubectrl.testing.FakeAPI`.
"""

from __future__ import annotations

import dataclasses
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping, Sequence
from typing import Any

from kubectrl import crd as _crd
from kubectrl.apiserver._admission.admission import Attributes
from kubectrl.apiserver._endpoints.core import APICore
from kubectrl.apiserver._resources.info import ResourceInfo, crd_resource
from kubectrl.apiserver._schema.served import render
from kubectrl.apiserver._server.auth import UserInfo
from kubectrl.apiserver._status import StatusError, qualified
from kubectrl.resources import CustomResource

__all__ = [
    "AdmissionAttributes",
    "AdmissionError",
    "Rules",
    "ServedResource",
    "SubresourceRequest",
    "served_resources",
]

#: An admission rule: called with each write it covers; raises :class:`AdmissionError` to refuse.
AdmissionRule = Callable[["AdmissionAttributes"], None]


class AdmissionError(Exception):
    """Raised by an admission rule to refuse a write: the client gets ``code`` (403 Forbidden
    by default) with ``<resource> "<name>" is forbidden: <message>``."""

    def __init__(self, message: str, code: int = 403) -> None:
        super().__init__(message)
        self.message = message
        self.code = code


@dataclasses.dataclass
class ServedResource:
    """One served resource: its model(s), its core :class:`ResourceInfo`, the CRD it is
    described by (schema and printer columns), its admission rules and custom subresources."""

    models: tuple[type[CustomResource], ...]
    info: ResourceInfo
    crd: dict[str, Any]
    rules: list[tuple[frozenset[str], AdmissionRule]] = dataclasses.field(default_factory=list)
    subresources: dict[str, SubresourceHandler] = dataclasses.field(default_factory=dict)

    def printer_columns(self, version: str) -> list[dict[str, Any]]:
        """The version's ``additionalPrinterColumns``."""
        for entry in self.crd["spec"]["versions"]:
            if entry["name"] == version:
                return list(entry.get("additionalPrinterColumns") or ())
        return []


def served_resources(models: Sequence[type[CustomResource]]) -> list[ServedResource]:
    """The resources ``models`` declare (the versions of one kind become one resource)."""
    by_kind: dict[tuple[str, str], list[type[CustomResource]]] = {}
    for model in models:
        declared = getattr(model, "__kubectrl_resource__", None)
        if not (isinstance(model, type) and issubclass(model, CustomResource)) or declared is None:
            raise TypeError(
                f"an API server serves CustomResource subclasses that declare group, version "
                f"and kind; got {model!r}"
            )
        by_kind.setdefault((declared.group, declared.plural), []).append(model)
    out = []
    for group_models in by_kind.values():
        definition = _crd.generate(*group_models)
        out.append(ServedResource(tuple(group_models), crd_resource(definition), definition))
    return out


@dataclasses.dataclass(frozen=True)
class AdmissionAttributes:
    """What an admission rule judges (k8s.io/apiserver's ``admission.Attributes``; the webhook's
    :class:`kubectrl.webhook.AdmissionRequest` is an AdmissionReview's request): a write
    ``operation`` (``CREATE``, ``UPDATE``, ``DELETE``), the object as it will be stored
    (``object``: decoded, pruned, defaulted, with its uid, creationTimestamp, generation and
    managedFields, no resourceVersion yet; ``None`` for DELETE) and as it is stored
    (``old_object``; ``None`` for CREATE), both copies."""

    operation: str
    resource: ResourceInfo
    namespace: str | None
    name: str
    object: Mapping[str, Any] | None
    old_object: Mapping[str, Any] | None
    dry_run: bool
    core: APICore = dataclasses.field(repr=False)

    def list(
        self, model: type[CustomResource], namespace: str | None = None
    ) -> list[dict[str, Any]]:
        """The stored objects of another served kind (in ``namespace``, if given), as dicts."""
        kind = model.__kubectrl_kind__
        info = self.core.registry.get((kind.group, kind.plural))
        if info is None:
            raise ValueError(f"{model.__qualname__} is not served by this server")
        stored = self.core.storage.range(info.key)
        return [
            render(info, kind.version, obj)
            for key, obj in sorted(stored.items())
            if namespace is None or key[0] == namespace
        ]


@dataclasses.dataclass(frozen=True)
class SubresourceRequest:
    """A request to a custom subresource: the object it is about (as served at ``version``),
    the HTTP method, query parameters, body and the user (``None`` when the server
    authenticates nobody)."""

    method: str
    version: str
    namespace: str | None
    name: str
    object: dict[str, Any]
    params: Mapping[str, str]
    body: bytes
    user: UserInfo | None


#: A custom subresource: a JSON-able answer, or an async iterator of bytes streamed as they come.
SubresourceHandler = Callable[
    [SubresourceRequest], Awaitable[Mapping[str, Any] | AsyncIterator[bytes]]
]


def _refuse(info: ResourceInfo, name: str, err: AdmissionError) -> StatusError:
    what = f'{qualified(info.plural, info.group)} "{name}"'
    if err.code == 403:
        return StatusError.make(
            403,
            f"{what} is forbidden: {err.message}",
            reason="Forbidden",
            details={"name": name, "group": info.group, "kind": info.plural},
        )
    return StatusError.make(err.code, f"{what}: {err.message}")


class Rules:
    """The server's admission rules as a validating admission plugin: the rules of the write's
    operation, each with an :class:`AdmissionAttributes` of copies of the object as it will be
    stored and as it is stored (rendered at the request's version)."""

    def __init__(self, core: APICore, served: Mapping[tuple[str, str], ServedResource]) -> None:
        self.core = core
        self.served = served

    def __repr__(self) -> str:
        return f"Rules({sum(len(s.rules) for s in self.served.values())})"

    def __call__(self, attributes: Attributes) -> None:
        info, name = attributes.info, attributes.name
        served = self.served.get(info.key)
        if served is None:
            return
        rules = [rule for operations, rule in served.rules if attributes.operation in operations]
        if not rules:
            return
        version, obj, old = attributes.version, attributes.object, attributes.old_object
        request = AdmissionAttributes(
            attributes.operation,
            info,
            attributes.namespace,
            name,
            None if obj is None else render(info, version, obj),
            None if old is None else render(info, version, old),
            attributes.dry_run,
            self.core,
        )
        for rule in rules:
            try:
                rule(request)
            except AdmissionError as err:
                raise _refuse(info, name, err) from None
