"""CRD schemas of the built-in Kubernetes types, from each supported API server's OpenAPI v3.

``_builtin_schemas-v1.<minor>.json.gz`` (generated, do not edit; one per supported minor,
:data:`VERSIONS`) holds every definition kube-apiserver of that minor publishes in its OpenAPI v3
documents (once each, referring to each other by name) and the ``kubernetes.client.models`` class
name of each, gzipped (about a fifth of the JSON; read and decompressed on first use, about 15 ms
a table). Regenerate one with::

    python -m kubectrl._builtin_schemas_gen KUBECONFIG | gzip -9n > \
        src/kubectrl/_builtin_schemas-v1.37.json.gz

(against an apiserver of that version, e.g. ``KUBECTRL_ENVTEST_K8S_VERSION=1.37 python -m
kubectrl.envtest start``); the integration test
``tests/integration/crd/test_builtin_schema_table.py`` regenerates the envtest apiserver's and
compares. :func:`crd_schema` uses the :data:`DEFAULT_VERSION` table unless told another.

:func:`crd_schema` turns one definition into the structural schema controller-gen writes for the
Go type (controller-tools ``pkg/crd``), references inlined:

* the types controller-tools knows by name (``pkg/crd/known_types.go``): ``ObjectMeta`` is
  ``{type: object}`` (or, with ``embedded_object_meta``, the five fields its
  ``generateEmbeddedObjectMeta`` option keeps), ``Time``/``MicroTime`` are date-time strings,
  ``IntOrString`` and ``Quantity`` are ``x-kubernetes-int-or-string`` (``Quantity`` with its
  pattern), ``RawExtension`` and ``FieldsV1`` keep unknown fields, ``JSON`` is any value;
* ``default`` only where upstream declares one (``+default=`` markers): the OpenAPI generator's
  implicit zero values (``{}`` for every struct, ``""``/``0``/``false`` for required fields) are
  not defaults a CRD should apply;
* the ``+kubebuilder:validation`` markers of ``metav1.Condition`` (its reason and type patterns,
  length limits, the three statuses), which controller-gen reads from the Go source and the
  published OpenAPI lacks;
* no ``enum``: controller-gen reads ``+kubebuilder:validation:Enum``/``+k8s:enum``, not the
  ``+enum`` the built-in types use (the values stay in the descriptions);
* descriptions only when asked: a pod template's are about 300 KB, which puts a CRD with one
  over kubectl's 256 KiB client-side-apply annotation limit, and they repeat what
  ``kubectl explain`` says of the built-in type.
"""

from __future__ import annotations

import copy
import functools
import gzip
import json
from collections.abc import Mapping
from importlib import resources as _resources
from typing import Any

__all__ = [
    "DEFAULT_VERSION",
    "VERSIONS",
    "BuiltinSchemaError",
    "crd_schema",
    "definition_name",
    "definitions",
    "server_version",
    "table_file",
]

#: The Kubernetes minors a table ships for (``kubectrl.envtest.SUPPORTED_VERSIONS``).
VERSIONS = ("1.35", "1.36", "1.37")
#: The table used when no version is named (``kubectrl.envtest.DEFAULT_VERSION``).
DEFAULT_VERSION = "1.37"

_META = "io.k8s.apimachinery.pkg.apis.meta.v1."
_QUANTITY_PATTERN = (
    r"^(\+|-)?(([0-9]+(\.[0-9]*)?)|(\.[0-9]+))(([KMGTPE]i)|[numkMGTPE]|([eE](\+|-)?"
    r"(([0-9]+(\.[0-9]*)?)|(\.[0-9]+))))?$"
)
_INT_OR_STRING: dict[str, Any] = {
    "anyOf": [{"type": "integer"}, {"type": "string"}],
    "x-kubernetes-int-or-string": True,
}
_KNOWN: dict[str, dict[str, Any]] = {
    _META + "ObjectMeta": {"type": "object"},
    _META + "Time": {"type": "string", "format": "date-time"},
    _META + "MicroTime": {"type": "string", "format": "date-time"},
    _META + "FieldsV1": {"type": "object", "x-kubernetes-preserve-unknown-fields": True},
    "io.k8s.apimachinery.pkg.util.intstr.IntOrString": _INT_OR_STRING,
    "io.k8s.apimachinery.pkg.api.resource.Quantity": {
        **_INT_OR_STRING,
        "pattern": _QUANTITY_PATTERN,
    },
    "io.k8s.apimachinery.pkg.runtime.RawExtension": {
        "type": "object",
        "x-kubernetes-preserve-unknown-fields": True,
    },
    "io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1.JSON": {
        "x-kubernetes-preserve-unknown-fields": True
    },
}
_STRING_MAP = {"type": "object", "additionalProperties": {"type": "string"}}
_EMBEDDED_OBJECT_META: dict[str, Any] = {
    "type": "object",
    "properties": {
        "annotations": _STRING_MAP,
        "finalizers": {"type": "array", "items": {"type": "string"}},
        "labels": _STRING_MAP,
        "name": {"type": "string"},
        "namespace": {"type": "string"},
    },
}
# Validation markers (``+kubebuilder:validation:...``) in the Go source of built-in types, which
# controller-gen reads and the published OpenAPI does not carry: definition -> property -> keys.
_MARKERS: dict[str, dict[str, dict[str, Any]]] = {
    _META + "Condition": {
        "lastTransitionTime": {},
        "message": {"maxLength": 32768},
        "observedGeneration": {"minimum": 0},
        "reason": {
            "maxLength": 1024,
            "minLength": 1,
            "pattern": "^[A-Za-z]([A-Za-z0-9_,:]*[A-Za-z0-9_])?$",
        },
        "status": {"enum": ["True", "False", "Unknown"]},
        "type": {
            "maxLength": 316,
            "pattern": (
                r"^([a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*/)?"
                r"(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])$"
            ),
        },
    },
}
# Keys of the published schema a CRD schema keeps as they are.
_COPIED = (
    "type",
    "format",
    "pattern",
    "minimum",
    "maximum",
    "exclusiveMinimum",
    "exclusiveMaximum",
    "minLength",
    "maxLength",
    "minItems",
    "maxItems",
    "minProperties",
    "maxProperties",
    "multipleOf",
    "nullable",
    "x-kubernetes-list-type",
    "x-kubernetes-list-map-keys",
    "x-kubernetes-map-type",
    "x-kubernetes-preserve-unknown-fields",
    "x-kubernetes-embedded-resource",
    "x-kubernetes-int-or-string",
    "x-kubernetes-validations",
)


class BuiltinSchemaError(ValueError):
    """A built-in type has no CRD schema; ``path`` says where below the type the problem is."""

    def __init__(self, path: str, problem: str) -> None:
        super().__init__(problem)
        self.path = path
        self.problem = problem


def table_file(version: str) -> str:
    """The file name of a minor's table (``_builtin_schemas-v1.37.json.gz``)."""
    return f"_builtin_schemas-v{version}.json.gz"


def _minor(version: str | None) -> str:
    if version is None:
        return DEFAULT_VERSION
    minor = ".".join(version.lstrip("v").split(".")[:2])
    if minor not in VERSIONS:
        raise BuiltinSchemaError(
            "",
            f"no built-in schemas for Kubernetes {version}; they ship for {', '.join(VERSIONS)}",
        )
    return minor


@functools.cache
def _load(minor: str) -> dict[str, Any]:
    data = _resources.files("kubectrl").joinpath(table_file(minor)).read_bytes()
    table: dict[str, Any] = json.loads(gzip.decompress(data))
    return table


def _table(version: str | None = None) -> dict[str, Any]:
    return _load(_minor(version))


def server_version(version: str | None = None) -> str:
    """The version of the API server a minor's table was generated from (``v1.37.2``).

    Example::

        >>> server_version("1.36")
        'v1.36.3'
    """
    return str(_table(version)["server"])


def definitions(version: str | None = None) -> Mapping[str, Any]:
    """Every definition of a minor's table by OpenAPI name (shared: do not change it)."""
    table: Mapping[str, Any] = _table(version)["definitions"]
    return table


def classes(version: str | None = None) -> frozenset[str]:
    """The ``kubernetes.client.models`` class names a minor's server has definitions for.

    A built-in kind whose class is missing was not served by that release's apiserver (the
    tables are generated from its OpenAPI document). Example::

        >>> [("V1MutatingAdmissionPolicy" in classes(v)) for v in ("1.35", "1.36")]
        [False, True]
    """
    return _classes(_minor(version))


@functools.cache
def _classes(minor: str) -> frozenset[str]:
    return frozenset(_load(minor)["classes"])


def definition_name(cls: type[Any]) -> str | None:
    """The OpenAPI definition name of a ``kubernetes.client.models`` class, or ``None``.

    Example::

        >>> from kubernetes.client import V1PodTemplateSpec
        >>> definition_name(V1PodTemplateSpec)
        'io.k8s.api.core.v1.PodTemplateSpec'
        >>> definition_name(int) is None
        True
    """
    if not getattr(cls, "__module__", "").startswith("kubernetes.client."):
        return None
    name = _table()["classes"].get(cls.__name__)
    return None if name is None else str(name)


def crd_schema(
    name: str,
    *,
    descriptions: bool = False,
    embedded_object_meta: bool = False,
    version: str | None = None,
) -> dict[str, Any]:
    """The structural CRD schema of the definition ``name``, every reference inlined.

    ``version`` is the Kubernetes minor whose table is read (default :data:`DEFAULT_VERSION`).
    Raises :class:`BuiltinSchemaError` for a name the table lacks, a version without a table or a
    recursive type.

    Example::

        >>> crd_schema("io.k8s.api.core.v1.LocalObjectReference")
        {'type': 'object', 'x-kubernetes-map-type': 'atomic', \
'properties': {'name': {'type': 'string', 'default': ''}}}
    """
    minor = _minor(version)
    return copy.deepcopy(_crd_schema_cached(name, descriptions, embedded_object_meta, minor))


@functools.cache
def _crd_schema_cached(
    name: str, descriptions: bool, embedded_object_meta: bool, minor: str
) -> dict[str, Any]:
    return _Resolver(descriptions, embedded_object_meta, minor).definition(name, "", [])


class _Resolver:
    def __init__(self, descriptions: bool, embedded_object_meta: bool, minor: str) -> None:
        self.descriptions = descriptions
        self.embedded_object_meta = embedded_object_meta
        self.minor = minor

    def definition(self, name: str, path: str, stack: list[str]) -> dict[str, Any]:
        if name == _META + "ObjectMeta" and self.embedded_object_meta:
            return copy.deepcopy(_EMBEDDED_OBJECT_META)
        if name in _KNOWN:
            return copy.deepcopy(_KNOWN[name])
        known = definitions(self.minor)
        if name not in known:
            raise BuiltinSchemaError(
                path,
                f"{name} is not in the OpenAPI of the API server {server_version(self.minor)}",
            )
        if name in stack:
            chain = " -> ".join(n.rsplit(".", 1)[-1] for n in [*stack[stack.index(name) :], name])
            raise BuiltinSchemaError(
                path,
                f"recursive type ({chain}): a CRD schema cannot refer to itself; use "
                "Annotated[dict[str, Any], PreserveUnknownFields()] for this field",
            )
        schema = self.node(known[name], path, [*stack, name], required=False)
        for prop, keys in _MARKERS.get(name, {}).items():
            schema["properties"][prop].update(copy.deepcopy(keys))
        return schema

    def node(
        self, node: Mapping[str, Any], path: str, stack: list[str], *, required: bool
    ) -> dict[str, Any]:
        out: dict[str, Any] = {}
        if "$ref" in node:
            out = self.definition(str(node["$ref"]), path, stack)
            if not self.descriptions:
                out.pop("description", None)
        elif "oneOf" in node or "anyOf" in node:
            raise BuiltinSchemaError(path, "an untagged union has no CRD schema")
        if self.descriptions and node.get("description"):
            # The field's description wins over its type's, as in controller-gen.
            out.pop("description", None)
            out = {"description": node["description"], **out}
        for key in _COPIED:
            if key in node:
                out[key] = copy.deepcopy(node[key])
        if "items" in node:
            out["items"] = self.node(node["items"], f"{path}[]", stack, required=False)
        additional = node.get("additionalProperties")
        if isinstance(additional, Mapping):
            out["additionalProperties"] = self.node(
                additional, f"{path}{{}}", stack, required=False
            )
        elif additional is True and "properties" not in node:
            out["x-kubernetes-preserve-unknown-fields"] = True
        properties: Mapping[str, Any] = node.get("properties") or {}
        own_required = [str(r) for r in node.get("required") or ()]
        if properties:
            out["properties"] = {
                prop: self.node(
                    schema,
                    f"{path}.{prop}" if path else prop,
                    stack,
                    required=prop in own_required,
                )
                for prop, schema in properties.items()
            }
        if own_required:
            out["required"] = own_required
        if "default" in node and not _implicit_default(node["default"], required=required):
            out["default"] = copy.deepcopy(node["default"])
        return _ordered(out)


def _implicit_default(value: Any, *, required: bool) -> bool:
    """The OpenAPI generator's zero value rather than a ``+default=`` marker's value."""
    if value == {} or value == []:
        return True
    return required and value in ("", 0, False) and not isinstance(value, float)


_ORDER = ("description", "type", "format")


def _ordered(schema: dict[str, Any]) -> dict[str, Any]:
    front = {key: schema[key] for key in _ORDER if key in schema}
    return {**front, **{k: v for k, v in schema.items() if k not in front}}
