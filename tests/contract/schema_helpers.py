"""A CRD per schema for the structural-schema contract cases (imported by test_schema_*.py)."""

from __future__ import annotations

import copy
import hashlib
import json
from collections.abc import Mapping
from typing import Any

from contract_helpers import Target, unique

from kubectrl.errors import InvalidError


def schema_crd(
    group: str, spec: Mapping[str, Any], *, selectable: list[str] | None = None
) -> dict[str, Any]:
    """A namespaced ``Thing`` CRD whose ``spec`` has the schema ``spec``."""
    version: dict[str, Any] = {
        "name": "v1",
        "served": True,
        "storage": True,
        "schema": {"openAPIV3Schema": {"type": "object", "properties": {"spec": dict(spec)}}},
    }
    if selectable:
        version["selectableFields"] = [{"jsonPath": f".{path}"} for path in selectable]
    return {
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": f"things.{group}"},
        "spec": {
            "group": group,
            "scope": "Namespaced",
            "names": {"plural": "things", "singular": "thing", "kind": "Thing"},
            "versions": [version],
        },
    }


async def thing_kind(
    target: Target, spec: Mapping[str, Any], *, selectable: list[str] | None = None
) -> tuple[str, str]:
    """The ``(apiVersion, kind)`` of a CRD with this spec schema, installed once per session on
    the real server (per case on the fake)."""
    key = hashlib.sha1(
        json.dumps([spec, selectable], sort_keys=True).encode(), usedforsecurity=False
    ).hexdigest()[:10]
    cache = target._crd_cache
    group = cache.get(key)  # the fake's cache is the case's own
    if group is None:
        group = f"s{key}.schema.kubectrl.test"
        await target.install_crd(schema_crd(group, spec, selectable=selectable))
        cache[key] = group
    return (f"{group}/v1", "Thing")


def thing(kind: tuple[str, str], namespace: str, spec: Any, name: str = "") -> dict[str, Any]:
    """A Thing object."""
    return {
        "apiVersion": kind[0],
        "kind": kind[1],
        "metadata": {"name": name or unique("thing"), "namespace": namespace},
        "spec": copy.deepcopy(spec),
    }


def fields(err: InvalidError) -> list[tuple[str, str]]:
    """``(type, field)`` of each cause, sorted."""
    return sorted((cause.type, cause.field) for cause in err.causes)
