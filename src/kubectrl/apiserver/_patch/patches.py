"""Patch semantics: JSON merge patch (RFC 7386), JSON patch (RFC 6902) and strategic merge patch.

Strategic merge patch covers the built-in list-merge keys the core knows (containers, env,
ports, volumes, volumeMounts, conditions, ownerReferences... see :data:`MERGE_KEYS`), merged
primitive lists (``finalizers``), the ``$patch: replace|delete|merge`` directive and the
``$retainKeys``, ``$deleteFromPrimitiveList/<list>`` and ``$setElementOrder/<list>`` directives.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Callable
from typing import Any

from kubectrl.apiserver._status import StatusError, bad_request

__all__ = [
    "MAX_COPY_BYTES",
    "MAX_JSON_PATCH_OPERATIONS",
    "MERGE_KEYS",
    "json_patch",
    "merge_patch",
    "strategic_merge_patch",
]

#: List field name -> merge key, for strategic merge patch and server-side apply on built-ins.
#: ``ports`` is keyed by ``containerPort`` inside a container and by ``port`` elsewhere.
MERGE_KEYS: dict[str, str] = {
    "containers": "name",
    "initContainers": "name",
    "ephemeralContainers": "name",
    "env": "name",
    "volumes": "name",
    "volumeMounts": "mountPath",
    "volumeDevices": "devicePath",
    "imagePullSecrets": "name",
    "hostAliases": "ip",
    "conditions": "type",
    "ownerReferences": "uid",
    "resourceClaims": "name",
    "topologySpreadConstraints": "topologyKey",
    "ports": "port",
}
#: The most operations one JSON patch may have (apiserver handlers/patch.go
#: ``maxJSONPatchOperations``): more is a 413.
MAX_JSON_PATCH_OPERATIONS = 10000
#: How many bytes a JSON patch's ``copy`` operations may add in all (the apiserver's
#: ``JSONPatchMaxCopyBytes``, 3 MiB, as json-patch's ``AccumulatedCopySizeLimit``): more is
#: the 422 of a failed patch.
MAX_COPY_BYTES = 3 * 1024 * 1024
#: Primitive lists merged as sets.
MERGED_PRIMITIVES = {"finalizers"}


def merge_key(field: str, parent: str) -> str | None:
    """The merge key of list ``field`` under ``parent`` (the enclosing field name)."""
    if field == "ports" and parent in ("containers", "initContainers", "ephemeralContainers"):
        return "containerPort"
    return MERGE_KEYS.get(field)


def merge_patch(target: Any, patch: Any) -> Any:
    """RFC 7386: maps merge recursively, ``null`` deletes, anything else replaces.

    Example::

        >>> merge_patch({"a": {"b": 1, "c": 2}}, {"a": {"b": None, "d": 3}})
        {'a': {'c': 2, 'd': 3}}
    """
    if not isinstance(patch, dict):
        return copy.deepcopy(patch)
    result = copy.deepcopy(target) if isinstance(target, dict) else {}
    _merge_into(result, patch)
    return result


def _merge_into(result: dict[str, Any], patch: dict[str, Any]) -> None:
    """Merge ``patch`` into ``result`` in place (``result`` is already the caller's copy, so
    the target is copied once, not once per level)."""
    for key, value in patch.items():
        if value is None:
            result.pop(key, None)
        elif isinstance(value, dict):
            current = result.get(key)
            if not isinstance(current, dict):
                current = result[key] = {}
            _merge_into(current, value)
        else:
            result[key] = copy.deepcopy(value)


def _pointer(path: str) -> list[str]:
    if path == "":
        return []
    if not path.startswith("/"):
        raise bad_request(
            "the server rejected our request due to an error "
            f'in our request: invalid JSON pointer "{path}"'
        )
    return [p.replace("~1", "/").replace("~0", "~") for p in path[1:].split("/")]


def _container(doc: Any, parts: list[str], op: str, path: str) -> tuple[Any, str]:
    node = doc
    for part in parts[:-1]:
        if isinstance(node, dict) and part in node:
            node = node[part]
        elif isinstance(node, list) and part.isdigit() and int(part) < len(node):
            node = node[int(part)]
        else:
            raise StatusError.make(
                422,
                (
                    "the server rejected our request due to an error in our "
                    f'request: doc is missing path: "{path}": missing value'
                ),
                reason="Invalid",
            )
    return node, parts[-1]


def _missing(path: str) -> StatusError:
    return StatusError.make(
        422,
        (
            "the server rejected our request due to an error in our "
            f'request: doc is missing path: "{path}": missing value'
        ),
        reason="Invalid",
    )


def json_patch(doc: Any, operations: Any) -> Any:
    """RFC 6902 operations (add, remove, replace, move, copy, test) on a copy of ``doc``.

    Example::

        >>> json_patch({"a": [1]}, [{"op": "add", "path": "/a/-", "value": 2}])
        {'a': [1, 2]}
    """
    if not isinstance(operations, list):
        raise bad_request(
            "the server rejected our request due to an error in "
            "our request: a JSON patch is a list of operations"
        )
    if len(operations) > MAX_JSON_PATCH_OPERATIONS:
        raise StatusError.make(
            413,
            "Request entity too large: The allowed maximum operations in a JSON patch is "
            f"{MAX_JSON_PATCH_OPERATIONS}, got {len(operations)}",
            reason="RequestEntityTooLarge",
        )
    doc = copy.deepcopy(doc)
    copied = 0
    for op in operations:
        if not isinstance(op, dict) or "op" not in op or "path" not in op:
            raise bad_request(
                "the server rejected our request due to an error in "
                f"our request: invalid JSON patch operation {op!r}"
            )
        kind, path = op["op"], str(op["path"])
        if kind in ("add", "replace", "test") and "value" not in op:
            raise bad_request(
                "the server rejected our request due to an error in "
                f'our request: missing value for operation "{kind}"'
            )
        if kind == "test":
            if _get(doc, path) != op["value"]:
                raise _rejected()
            continue
        if kind in ("move", "copy"):
            value = _get(doc, str(op.get("from", "")))
            if kind == "copy":
                # each copy's JSON counts against the limit before it is made
                copied += _size(value)
                if copied > MAX_COPY_BYTES:
                    raise _rejected()
            if kind == "move":
                doc = _remove(doc, str(op["from"]))
            doc = _add(doc, path, copy.deepcopy(value))
        elif kind == "add":
            doc = _add(doc, path, copy.deepcopy(op["value"]))
        elif kind == "remove":
            doc = _remove(doc, path)
        elif kind == "replace":
            # The apiserver accepts replacing a missing map key (it is added); removing one
            # is refused.
            if not _missing_map_key(doc, path):
                doc = _remove(doc, path)
            doc = _add(doc, path, copy.deepcopy(op["value"]))
        else:
            raise _rejected()
    return doc


def _size(value: Any) -> int:
    text = json.dumps(value, separators=(",", ":"), ensure_ascii=False)
    return len(text.encode("utf-8", "surrogatepass"))


def _rejected() -> StatusError:
    # What the apiserver answers for a failed "test" or an unknown operation: no detail.
    return StatusError(
        422,
        {
            "kind": "Status",
            "apiVersion": "v1",
            "metadata": {},
            "status": "Failure",
            "message": "the server rejected our request due to an error in our request",
            "reason": "Invalid",
            "details": {},
            "code": 422,
        },
    )


def _missing_map_key(doc: Any, path: str) -> bool:
    parts = _pointer(path)
    if not parts:
        return False
    try:
        parent = (
            _get(doc, "/" + "/".join(p.replace("~", "~0").replace("/", "~1") for p in parts[:-1]))
            if len(parts) > 1
            else doc
        )
    except StatusError:
        return False
    return isinstance(parent, dict) and parts[-1] not in parent


def _go_map(item: dict[str, Any]) -> str:
    return "map[" + " ".join(f"{k}:{v}" for k, v in sorted(item.items())) + "]"


def _get(doc: Any, path: str) -> Any:
    node = doc
    for part in _pointer(path):
        if isinstance(node, dict) and part in node:
            node = node[part]
        elif isinstance(node, list) and part.isdigit() and int(part) < len(node):
            node = node[int(part)]
        else:
            raise _missing(path)
    return node


def _add(doc: Any, path: str, value: Any) -> Any:
    parts = _pointer(path)
    if not parts:
        return value
    node, last = _container(doc, parts, "add", path)
    if isinstance(node, dict):
        node[last] = value
    elif isinstance(node, list):
        if last == "-":
            node.append(value)
        elif last.isdigit() and int(last) <= len(node):
            node.insert(int(last), value)
        else:
            raise _missing(path)
    else:
        raise _missing(path)
    return doc


def _remove(doc: Any, path: str) -> Any:
    parts = _pointer(path)
    node, last = _container(doc, parts, "remove", path)
    if isinstance(node, dict) and last in node:
        del node[last]
    elif isinstance(node, list) and last.isdigit() and int(last) < len(node):
        del node[int(last)]
    else:
        raise _missing(path)
    return doc


_RETAIN_KEYS = "$retainKeys"
_DELETE_FROM = "$deleteFromPrimitiveList"
_SET_ORDER = "$setElementOrder"


def _smp_error(message: str) -> StatusError:
    # apiserver handlers/patch.go interpretStrategicMergePatchError: the directives' format
    # errors are 400s with mergepatch's text
    return bad_request(message)


def _directive_field(key: str, prefix: str, message: str) -> str:
    """``extractKey``: the list field a ``$prefix/field`` directive names."""
    head, _, field = key.partition("/")
    if head != prefix or not _:
        raise _smp_error(message)
    return field


def strategic_merge_patch(target: Any, patch: Any, parent: str = "") -> Any:
    """Strategic merge patch for built-in kinds, as ``k8s.io/apimachinery/pkg/util/
    strategicpatch`` applies one (merge keys: :data:`MERGE_KEYS`), with the ``$patch``,
    ``$retainKeys``, ``$deleteFromPrimitiveList/<list>`` and ``$setElementOrder/<list>``
    directives.

    Example::

        >>> strategic_merge_patch(
        ...     {"containers": [{"name": "a", "image": "x"}, {"name": "b", "image": "y"}]},
        ...     {"containers": [{"name": "b", "image": "z"}]})
        {'containers': [{'name': 'a', 'image': 'x'}, {'name': 'b', 'image': 'z'}]}
        >>> strategic_merge_patch({"finalizers": ["a", "b"]},
        ...                       {"$deleteFromPrimitiveList/finalizers": ["a"]})
        {'finalizers': ['b']}
    """
    if not isinstance(patch, dict):
        return copy.deepcopy(patch)
    directive = patch.get("$patch")
    if directive == "replace":
        return {k: copy.deepcopy(v) for k, v in patch.items() if k != "$patch"}
    if directive == "delete":
        return None
    if directive not in (None, "merge"):
        raise bad_request(
            "the server rejected our request due to an error "
            f"in our request: Unknown patch type: {directive}"
        )
    result = copy.deepcopy(target) if isinstance(target, dict) else {}
    patch = dict(patch)
    if _RETAIN_KEYS in patch:
        _retain_keys(result, patch, patch.pop(_RETAIN_KEYS))
    for key in [k for k in patch if isinstance(k, str) and k.startswith(_SET_ORDER)]:
        message = "invalid patch format of setElementOrder list"
        field = _directive_field(key, _SET_ORDER, message)
        _set_element_order(result, patch, field, patch.pop(key), parent)
    for key, value in patch.items():
        if key == "$patch":
            continue
        if isinstance(key, str) and key.startswith(_DELETE_FROM):
            message = "invalid patch format of primitive list"
            _delete_from_list(result, _directive_field(key, _DELETE_FROM, message), value, parent)
            continue
        if value is None:
            result.pop(key, None)
        elif isinstance(value, dict):
            merged = strategic_merge_patch(result.get(key), value, key)
            if merged is None:
                result.pop(key, None)
            else:
                result[key] = merged
        elif isinstance(value, list):
            result[key] = _merge_list(result.get(key), value, key, parent)
        else:
            result[key] = copy.deepcopy(value)
    return result


def _retain_keys(result: dict[str, Any], patch: dict[str, Any], keys: Any) -> None:
    """``applyRetainKeysDirective``: the patch's own fields must be listed; the object's fields
    not listed are cleared."""
    if not isinstance(keys, list):
        raise _smp_error("invalid patch format of retainKeys")
    listed = {json.dumps(k) for k in keys}
    for key, value in patch.items():
        if value is None or key.startswith((_DELETE_FROM, _SET_ORDER)):
            continue
        if json.dumps(key) not in listed:
            raise _smp_error("invalid patch format of retainKeys")
    for key in [k for k in result if json.dumps(k) not in listed]:
        del result[key]


def _ident(field: str, parent: str) -> Callable[[Any], Any]:
    key = merge_key(field, parent)
    if key is None:
        return lambda v: json.dumps(v, sort_keys=True)
    return lambda v: v.get(key) if isinstance(v, dict) else None


def _set_element_order(
    result: dict[str, Any], patch: dict[str, Any], field: str, order: Any, parent: str
) -> None:
    """``mergePatchIntoOriginal``: the list merged as usual, then its items named by the
    directive in the directive's order, the others where the server had them."""
    if not isinstance(order, list):
        raise _smp_error("invalid patch format of setElementOrder list")
    original, found_original = result.get(field), field in result
    found_patch = field in patch
    patch_list = patch.pop(field, None)
    if found_original and not isinstance(original, list):
        raise _smp_error("invalid patch format of setElementOrder list")
    if found_patch and not isinstance(patch_list, list):
        raise _smp_error("invalid patch format of setElementOrder list")
    merged: list[Any]
    if isinstance(original, list) and isinstance(patch_list, list):
        merged = _merge_list(original, patch_list, field, parent)
    elif isinstance(patch_list, list):
        merged = [
            copy.deepcopy(i) for i in patch_list if not (isinstance(i, dict) and "$patch" in i)
        ]
    elif isinstance(original, list):
        merged = copy.deepcopy(original)
    else:
        return
    result[field] = _element_order(merged, order, original or [], _ident(field, parent))


def _delete_from_list(result: dict[str, Any], field: str, value: Any, parent: str) -> None:
    """``$deleteFromPrimitiveList/<field>``: the listed values leave a list of scalars (merged
    or not, as the apiserver does); a null deletes the list; nothing when the object has no
    such list."""
    if value is None:
        result.pop(field, None)
        return
    original = result.get(field)
    if not isinstance(original, list) or not isinstance(value, list):
        return
    if merge_key(field, parent) is not None and all(isinstance(v, dict) for v in value):
        result[field] = _merge_list(original, value, field, parent)
    else:
        gone = {json.dumps(v) for v in value}
        result[field] = [v for v in original if json.dumps(v) not in gone]


def _merge_list(original: Any, patch: list[Any], field: str, parent: str) -> list[Any]:
    current: list[Any] = copy.deepcopy(original) if isinstance(original, list) else []
    if field in MERGED_PRIMITIVES:
        for item in patch:
            if item not in current:
                current.append(copy.deepcopy(item))
        return _element_order(current, patch, original or [], lambda v: v)
    key = merge_key(field, parent)
    if key is None or not all(isinstance(i, dict) for i in patch):
        if any(isinstance(i, dict) and i.get("$patch") == "replace" for i in patch):
            return [copy.deepcopy(i) for i in patch if not (isinstance(i, dict) and "$patch" in i)]
        return copy.deepcopy(patch)
    if any(i.get("$patch") == "replace" for i in patch):
        return [copy.deepcopy(i) for i in patch if "$patch" not in i]
    for item in patch:
        if key not in item:
            # Answered as a 500 without a reason by the apiserver.
            raise StatusError(
                500,
                {
                    "kind": "Status",
                    "apiVersion": "v1",
                    "metadata": {},
                    "status": "Failure",
                    "message": f"map: {_go_map(item)} does not contain declared merge key: {key}",
                    "code": 500,
                },
            )
        index = next(
            (n for n, c in enumerate(current) if isinstance(c, dict) and c.get(key) == item[key]),
            None,
        )
        if item.get("$patch") == "delete":
            if index is not None:
                del current[index]
            continue
        if index is None:
            current.append(strategic_merge_patch({}, item, field))
        else:
            current[index] = strategic_merge_patch(current[index], item, field)
    kept = [i for i in patch if i.get("$patch") != "delete"]
    return _element_order(current, kept, original or [], lambda v: v.get(key))


def _element_order(
    merged: list[Any], patch: list[Any], original: list[Any], ident: Callable[[Any], Any]
) -> list[Any]:
    # strategicpatch/patch.go normalizeElementOrder: the patch's items in patch order, the
    # server-only items in server order, then merged; a patch item goes first unless both items
    # are in the original list and the server-only one came before it there.
    def position(items: list[Any], item: Any) -> int:
        return next((n for n, v in enumerate(items) if ident(v) == ident(item)), -1)

    in_patch = [m for m in merged if position(patch, m) >= 0]
    server_only = [m for m in merged if position(patch, m) < 0]
    in_patch.sort(key=lambda m: position(patch, m))
    server_only.sort(key=lambda m: position(original, m))
    out: list[Any] = []
    while in_patch or server_only:
        if not in_patch or (
            server_only
            and 0 <= position(original, server_only[0]) < position(original, in_patch[0])
        ):
            out.append(server_only.pop(0))
        else:
            out.append(in_patch.pop(0))
    return out
