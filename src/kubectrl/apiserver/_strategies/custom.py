"""The strategy of custom resources (``apiextensions-apiserver``
``pkg/registry/customresource/strategy.go`` and ``validator.go``).

One strategy serves every CRD's resource; what differs comes from the CRD
(:class:`~kubectrl.apiserver._resources.info.ResourceInfo`: versions, schemas, subresources).
Objects are pruned, defaulted and validated by the version's structural schema
(:mod:`~kubectrl.apiserver._schema.structural`), an update must name the resourceVersion it
replaces, the status of a create is dropped (with a status subresource) and the generation
counts all but metadata (and status).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from kubectrl.apiserver._resources.info import ResourceInfo
from kubectrl.apiserver._schema import structural as _schema
from kubectrl.apiserver._schema.gotypes import object_meta_problem
from kubectrl.apiserver._status import bad_request, invalid
from kubectrl.apiserver._strategies.base import Strategy
from kubectrl.apiserver._validation.objects import embedded_object_meta

__all__ = ["CustomResources"]


class CustomResources(Strategy):
    """Custom resources: their CRD's schema."""

    generation = True
    allow_unconditional_update = False
    # apiextensions-apiserver's customResourceStrategy has no rest.DeclarativeValidation.
    declarative_validation = False

    def reset_status(self, info: ResourceInfo, obj: dict[str, Any]) -> None:
        """A create's status is dropped (``PrepareForCreate`` with a status subresource)."""
        del info
        obj.pop("status", None)

    def validate_schema(
        self,
        info: ResourceInfo,
        version: str,
        obj: dict[str, Any],
        name: str,
        old: dict[str, Any] | None,
    ) -> None:
        """Prune, default and validate a custom object with its CRD's schema at ``version``
        (``old``: the stored object of an update, for ratcheting and CEL transition rules).

        On an update whose content differs from the stored one only as Go's types see it
        (``3.0`` sent for a stored ``3``), the generation moves: the custom resource strategy
        compares the decoded object, a float, with the stored integer (``PrepareForUpdate``).
        """
        decoded: list[Any] = []
        try:
            errors = _schema.process(
                info.schemas.get(version),
                obj,
                old,
                decoded,
                embedded_meta=embedded_object_meta,
                decode_meta=object_meta_problem,
            )
        except _schema.EmbeddedDecodeError as err:
            raise bad_request(
                f'{info.kind} in version "{version}" cannot be handled as a {info.kind}: {err}'
            ) from None
        if errors:
            raise invalid(info.kind, info.group, name, errors)
        if old is None or not decoded or not info.generation:
            return

        def content(value: Mapping[str, Any]) -> str:
            skipped = {"metadata", "status"} if info.status else {"metadata"}
            return json.dumps({k: v for k, v in value.items() if k not in skipped}, sort_keys=True)

        if content(decoded[0]) != content(old) and content(obj) == content(old):
            meta = obj.setdefault("metadata", {})
            meta["generation"] = int((old.get("metadata") or {}).get("generation") or 0) + 1

    def spec_of(self, info: ResourceInfo, obj: Mapping[str, Any]) -> Any:
        """All but metadata (and status, with a status subresource)."""
        skip = {"metadata", "apiVersion", "kind"} | ({"status"} if info.status else set())
        return {k: v for k, v in obj.items() if k not in skip}
