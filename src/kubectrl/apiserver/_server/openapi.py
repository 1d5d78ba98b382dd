"""OpenAPI documents of the served resources: v2 (``/openapi/v2``) and v3 (``/openapi/v3``).

Each kind's schema is its structural schema (what validates it), with
``x-kubernetes-group-version-kind`` so ``kubectl explain`` finds it and kube-apiserver's
aggregator merges it into the cluster's documents; ``metadata`` is a reference to the ObjectMeta
definition the documents carry. Paths list the operations each resource serves (as the
apiserver's OpenAPI builder names them), which the aggregator and client generators read.
"""

from __future__ import annotations

import copy
import hashlib
import json
from collections.abc import Iterable, Mapping
from typing import Any

from kubectrl.apiserver._resources.info import ResourceInfo

__all__ = ["definition_name", "v2", "v3", "v3_index"]

_META = "io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta"
_LIST_META = "io.k8s.apimachinery.pkg.apis.meta.v1.ListMeta"
_STATUS = "io.k8s.apimachinery.pkg.apis.meta.v1.Status"
_SHARED: dict[str, dict[str, Any]] = {
    _META: {
        "description": "ObjectMeta is metadata that all persisted resources must have.",
        "type": "object",
        "x-kubernetes-preserve-unknown-fields": True,
        "properties": {
            "name": {"type": "string", "description": "Name must be unique within a namespace."},
            "namespace": {"type": "string", "description": "The namespace of the object."},
            "labels": {"type": "object", "additionalProperties": {"type": "string"}},
            "annotations": {"type": "object", "additionalProperties": {"type": "string"}},
            "resourceVersion": {"type": "string"},
            "uid": {"type": "string"},
            "generation": {"type": "integer", "format": "int64"},
            "creationTimestamp": {"type": "string", "format": "date-time"},
        },
    },
    _LIST_META: {
        "description": "ListMeta describes metadata that synthetic resources must have.",
        "type": "object",
        "properties": {
            "resourceVersion": {"type": "string"},
            "continue": {"type": "string"},
            "remainingItemCount": {"type": "integer", "format": "int64"},
        },
    },
    _STATUS: {
        "description": "Status is a return value for calls that don't return other objects.",
        "type": "object",
        "x-kubernetes-preserve-unknown-fields": True,
    },
}


#: Query parameters every write takes (kubectl reads ``fieldValidation`` here to leave field
#: validation to the server).
_WRITE_PARAMETERS = ("dryRun", "fieldManager", "fieldValidation")


def definition_name(info: ResourceInfo, version: str, kind: str | None = None) -> str:
    """The definition name of a kind: the group reversed, the version, the kind
    (``com.example.wardle.v1alpha1.Flunder``), as the apiserver names CRD definitions."""
    reversed_group = ".".join(reversed(info.group.split(".")))
    return f"{reversed_group}.{version}.{kind or info.kind}"


def _kind_schema(info: ResourceInfo, version: str, ref: str) -> dict[str, Any]:
    schema = copy.deepcopy(dict(info.schemas.get(version) or {"type": "object"}))
    props = schema.setdefault("properties", {})
    props["apiVersion"] = {
        "type": "string",
        "description": "APIVersion defines the versioned schema of this representation.",
    }
    props["kind"] = {
        "type": "string",
        "description": "Kind is a string value representing the REST resource of this object.",
    }
    props["metadata"] = {"$ref": f"{ref}{_META}", "description": "Standard object's metadata."}
    schema["type"] = "object"
    schema["x-kubernetes-group-version-kind"] = [
        {"group": info.group, "version": version, "kind": info.kind}
    ]
    return schema


def _list_schema(info: ResourceInfo, version: str, ref: str) -> dict[str, Any]:
    return {
        "type": "object",
        "required": ["items"],
        "properties": {
            "apiVersion": {"type": "string"},
            "kind": {"type": "string"},
            "metadata": {"$ref": f"{ref}{_LIST_META}"},
            "items": {
                "type": "array",
                "items": {"$ref": f"{ref}{definition_name(info, version)}"},
            },
        },
        "x-kubernetes-group-version-kind": [
            {"group": info.group, "version": version, "kind": info.list_kind}
        ],
    }


def _operations(info: ResourceInfo, version: str, ref: str, v3: bool) -> dict[str, dict[str, Any]]:
    """Paths of one resource: the collection, one object, and the status subresource."""
    base = f"/apis/{info.group}/{version}"
    prefix = f"{base}/namespaces/{{namespace}}" if info.namespaced else base
    kind_ref = {"$ref": f"{ref}{definition_name(info, version)}"}
    list_ref = {"$ref": f"{ref}{definition_name(info, version, info.list_kind)}"}
    gvk = {"group": info.group, "version": version, "kind": info.kind}

    def op(verb: str, action: str, schema: Mapping[str, Any]) -> dict[str, Any]:
        body: dict[str, Any] = {"description": "OK"}
        if v3:
            body["content"] = {"application/json": {"schema": dict(schema)}}
        else:
            body["schema"] = dict(schema)
        out: dict[str, Any] = {
            "operationId": f"{verb}{info.kind}",
            "x-kubernetes-action": action,
            "x-kubernetes-group-version-kind": gvk,
            "responses": {"200": body},
        }
        if action in ("post", "put", "patch"):
            # kubectl asks the server to validate fields when the operation takes the parameter.
            out["parameters"] = [
                {
                    "name": name,
                    "in": "query",
                    "uniqueItems": True,
                    **({"schema": {"type": "string"}} if v3 else {"type": "string"}),
                }
                for name in _WRITE_PARAMETERS
            ]
        return out

    paths = {
        f"{prefix}/{info.plural}": {
            "get": op("list", "list", list_ref),
            "post": op("create", "post", kind_ref),
            "delete": op("deletecollection", "deletecollection", {"$ref": f"{ref}{_STATUS}"}),
        },
        f"{prefix}/{info.plural}/{{name}}": {
            "get": op("read", "get", kind_ref),
            "put": op("replace", "put", kind_ref),
            "patch": op("patch", "patch", kind_ref),
            "delete": op("delete", "delete", kind_ref),
        },
    }
    if info.status:
        paths[f"{prefix}/{info.plural}/{{name}}/status"] = {
            "get": op("read", "get", kind_ref),
            "put": op("replace", "put", kind_ref),
            "patch": op("patch", "patch", kind_ref),
        }
    return paths


def _schemas(infos: Iterable[ResourceInfo], version: str | None, ref: str) -> dict[str, Any]:
    out: dict[str, Any] = copy.deepcopy(_SHARED)
    for info in infos:
        for v in info.versions:
            if version is not None and v != version:
                continue
            out[definition_name(info, v)] = _kind_schema(info, v, ref)
            out[definition_name(info, v, info.list_kind)] = _list_schema(info, v, ref)
    return out


def v2(infos: Iterable[ResourceInfo], title: str) -> dict[str, Any]:
    """The Swagger 2.0 document of every served resource."""
    served = list(infos)
    ref = "#/definitions/"
    paths: dict[str, Any] = {}
    for info in served:
        for v in info.versions:
            paths.update(_operations(info, v, ref, v3=False))
    return {
        "swagger": "2.0",
        "info": {"title": title, "version": "v0"},
        "paths": paths,
        "definitions": _schemas(served, None, ref),
    }


def v3(infos: Iterable[ResourceInfo], group: str, version: str, title: str) -> dict[str, Any]:
    """The OpenAPI 3.0 document of one group/version."""
    served = [i for i in infos if i.group == group and version in i.versions]
    ref = "#/components/schemas/"
    paths: dict[str, Any] = {}
    for info in served:
        paths.update(_operations(info, version, ref, v3=True))
    return {
        "openapi": "3.0.0",
        "info": {"title": title, "version": "v0"},
        "paths": paths,
        "components": {"schemas": _schemas(served, version, ref)},
    }


def v3_index(documents: Mapping[str, Mapping[str, Any]]) -> dict[str, Any]:
    """The ``/openapi/v3`` index: each group/version path with its document's hash."""
    paths = {}
    for path, document in sorted(documents.items()):
        digest = hashlib.sha512(json.dumps(document, sort_keys=True).encode()).hexdigest()
        paths[path] = {"serverRelativeURL": f"/openapi/v3/{path}?hash={digest.upper()}"}
    return {"paths": paths}
