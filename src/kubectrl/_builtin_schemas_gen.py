"""Regenerate a ``kubectrl/_builtin_schemas-v1.<minor>.json.gz`` from an API server's OpenAPI v3.

The server publishes one OpenAPI v3 document per group-version (``/openapi/v3`` lists them:
``api/v1``, ``apis/apps/v1``, ...); each holds the schemas of its types and of every type they
use under ``components.schemas``. This reads them all, keeps every definition once (keyed by its
OpenAPI name, ``io.k8s.api.core.v1.PodTemplateSpec``) with references by name instead of
inlined copies, and maps each ``kubernetes.client.models`` class name to its definition.

What is kept of a definition is what the server published, with three mechanical changes:
``allOf: [{$ref: "#/components/schemas/X"}]`` becomes ``{"$ref": "X"}`` (siblings kept), and the
keys no CRD schema can carry and the CRD generator never reads are dropped
(``x-kubernetes-patch-merge-key``, ``x-kubernetes-patch-strategy``, ``x-kubernetes-unions``,
``x-kubernetes-group-version-kind``). Lists (``...List``) and the API machinery's own protocol
types (``Status``, ``WatchEvent``, discovery documents) are left out: nobody embeds them. How a
definition becomes a CRD schema (controller-gen's rules) is :mod:`kubectrl._builtin_schemas`'s
business, at CRD-generation time.

Class names follow the ``kubernetes`` package's convention: ``V<version><Kind>``
(``V1PodTemplateSpec``), or prefixed with the group's first label when two groups define the
same version and kind (``CoreV1EndpointPort``, ``DiscoveryV1EndpointPort``).

Usage::

    python -m kubectrl._builtin_schemas_gen KUBECONFIG | gzip -9n > \
        src/kubectrl/_builtin_schemas-v1.37.json.gz

(the minor of the file is the server's). The integration test
``tests/integration/crd/test_builtin_schema_table.py`` regenerates the table from the envtest
API server and compares it with the committed file of its minor.
"""

from __future__ import annotations

import asyncio
import json
import re
import sys
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from kubectrl.client import AsyncClient

__all__ = ["build_table", "class_names", "fetch_definitions", "render_table"]

_REF_PREFIX = "#/components/schemas/"
_DROPPED_KEYS = frozenset(
    {
        "x-kubernetes-patch-merge-key",
        "x-kubernetes-patch-strategy",
        "x-kubernetes-unions",
        "x-kubernetes-group-version-kind",
    }
)
# The API machinery's protocol types: documents about the API, never part of an object's spec.
_PROTOCOL_TYPES = frozenset(
    f"io.k8s.apimachinery.pkg.apis.meta.v1.{name}"
    for name in (
        "APIGroup",
        "APIResource",
        "APIVersions",
        "DeleteOptions",
        "GroupVersionForDiscovery",
        "ListMeta",
        "Patch",
        "Preconditions",
        "ServerAddressByClientCIDR",
        "Status",
        "StatusCause",
        "StatusDetails",
        "WatchEvent",
    )
) | {"io.k8s.apimachinery.pkg.version.Info"}
_VERSION = re.compile(r"^v\d+(?:(?:alpha|beta)\d+)?$")


async def fetch_definitions(client: AsyncClient) -> dict[str, Any]:
    """Every definition the server's built-in groups publish in its OpenAPI v3 documents.

    Groups served by a CustomResourceDefinition or by an aggregated API server (an APIService
    with a ``service``) are left out: their types are not built in, and a server that has run
    tests has some installed.
    """
    index = await client._discovery_get("/openapi/v3")
    foreign = {
        str(crd["spec"]["group"])
        for crd in (await client.list(("apiextensions.k8s.io/v1", "CustomResourceDefinition")))[
            "items"
        ]
    } | {
        str(service["spec"].get("group") or "")
        for service in (await client.list(("apiregistration.k8s.io/v1", "APIService")))["items"]
        if service["spec"].get("service")
    }
    definitions: dict[str, Any] = {}
    for path in sorted(index.get("paths") or {}):
        if not (path.startswith("api/") or path.startswith("apis/")) or path.count("/") < 1:
            continue
        if path.startswith("apis/") and path.split("/")[1] in foreign:
            continue
        document = await client._discovery_get(f"/openapi/v3/{path}")
        schemas = (document.get("components") or {}).get("schemas") or {}
        for name, schema in schemas.items():
            definitions.setdefault(str(name), schema)
    return definitions


def _compact(node: Any) -> Any:
    if isinstance(node, list):
        return [_compact(item) for item in node]
    if not isinstance(node, dict):
        return node
    out: dict[str, Any] = {}
    all_of = node.get("allOf")
    if isinstance(all_of, list) and len(all_of) == 1 and set(all_of[0]) == {"$ref"}:
        out["$ref"] = str(all_of[0]["$ref"]).removeprefix(_REF_PREFIX)
    for key, value in node.items():
        if key in _DROPPED_KEYS or (key == "allOf" and "$ref" in out):
            continue
        if key == "$ref":
            out["$ref"] = str(value).removeprefix(_REF_PREFIX)
        elif key == "properties":
            out[key] = {name: _compact(prop) for name, prop in value.items()}
        else:
            out[key] = _compact(value)
    return out


def _refs(node: Any, found: set[str]) -> None:
    if isinstance(node, list):
        for item in node:
            _refs(item, found)
    elif isinstance(node, dict):
        for key, value in node.items():
            if key == "$ref" and isinstance(value, str):
                found.add(value)
            elif key == "properties":
                _refs(list(value.values()), found)
            elif key != "default":
                _refs(value, found)


def _split(name: str) -> tuple[str, str, str] | None:
    """``(group label, version, kind)`` of a definition name, or ``None`` (no version in it)."""
    parts = name.split(".")
    if len(parts) < 3 or not _VERSION.match(parts[-2]):
        return None
    return parts[-3], parts[-2], parts[-1]


def class_names(definitions: Mapping[str, Any]) -> dict[str, str]:
    """``kubernetes.client.models`` class name -> definition name, by the package's convention.

    Example::

        >>> class_names({"io.k8s.api.core.v1.EndpointPort": {},
        ...              "io.k8s.api.discovery.v1.EndpointPort": {},
        ...              "io.k8s.api.core.v1.PodSpec": {}})
        ... # doctest: +NORMALIZE_WHITESPACE
        {'CoreV1EndpointPort': 'io.k8s.api.core.v1.EndpointPort',
         'DiscoveryV1EndpointPort': 'io.k8s.api.discovery.v1.EndpointPort',
         'V1PodSpec': 'io.k8s.api.core.v1.PodSpec'}
    """
    seen: dict[tuple[str, str], int] = {}
    for name in definitions:
        split = _split(name)
        if split is not None:
            seen[split[1:]] = seen.get(split[1:], 0) + 1
    out: dict[str, str] = {}
    for name in definitions:
        split = _split(name)
        if split is None:
            continue
        group, version, kind = split
        plain = version[:1].upper() + version[1:] + kind
        out[group[:1].upper() + group[1:] + plain if seen[(version, kind)] > 1 else plain] = name
    return dict(sorted(out.items()))


def build_table(definitions: Mapping[str, Any], *, server_version: str = "") -> dict[str, Any]:
    """The table: the embeddable definitions (and what they use) and the class name mapping."""
    roots = {
        name
        for name in definitions
        if not name.endswith("List") and name not in _PROTOCOL_TYPES and name.startswith("io.k8s.")
    }
    kept: dict[str, Any] = {}
    todo = sorted(roots)
    while todo:
        name = todo.pop()
        if name in kept or name not in definitions:
            continue
        kept[name] = _compact(definitions[name])
        found: set[str] = set()
        _refs(kept[name], found)
        todo.extend(sorted(found - set(kept)))
    classes = {
        cls: name
        for cls, name in class_names(kept).items()
        if (kept[name].get("type") == "object" and "properties" in kept[name])
    }
    return {
        "server": server_version,
        "classes": classes,
        "definitions": dict(sorted(kept.items())),
    }


def render_table(table: Mapping[str, Any]) -> str:
    """The file's text: one class or definition per line, keys sorted (diffs stay readable)."""

    def dump(value: Any) -> str:
        return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)

    lines = ["{", f'"server":{dump(table["server"])},', '"classes":{']
    classes = list(table["classes"].items())
    lines.extend(
        f"{dump(cls)}:{dump(name)}{',' if i < len(classes) - 1 else ''}"
        for i, (cls, name) in enumerate(classes)
    )
    lines.append("},")
    lines.append('"definitions":{')
    definitions = list(table["definitions"].items())
    lines.extend(
        f"{dump(name)}:{dump(schema)}{',' if i < len(definitions) - 1 else ''}"
        for i, (name, schema) in enumerate(definitions)
    )
    lines.append("}")
    lines.append("}")
    return "\n".join(lines) + "\n"


async def _main(path: str) -> str:
    from kubectrl.client import AsyncClient, load_kubeconfig

    async with AsyncClient(load_kubeconfig(path)) as client:
        version: Any = (await client.server_version()).get("gitVersion", "")
        definitions = await fetch_definitions(client)
        return render_table(build_table(definitions, server_version=str(version)))


def main(argv: list[str] | None = None) -> int:
    """``python -m kubectrl._builtin_schemas_gen KUBECONFIG``: print the table file."""
    args = sys.argv[1:] if argv is None else argv
    if len(args) != 1:
        sys.stderr.write("usage: python -m kubectrl._builtin_schemas_gen KUBECONFIG\n")
        return 2
    sys.stdout.write(asyncio.run(_main(args[0])))
    return 0


if __name__ == "__main__":
    sys.exit(main())
