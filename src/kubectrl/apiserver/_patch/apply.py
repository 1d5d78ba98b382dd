"""Field ownership: ``managedFields`` and server-side apply, a simplified structured-merge-diff.

Fields are tracked as paths (``f:spec``, ``f:replicas``; ``k:{"name":"c"}`` for items of the
keyed built-in lists of :data:`~kubectrl.apiserver._patch.patches.MERGE_KEYS`; ``v:"x"`` for merged
primitive lists such as ``finalizers``); other lists are atomic (owned as a whole). An apply
conflicts when another manager owns a field the applied configuration sets to a different
value; ``force`` takes the field over. Fields the applier stops applying are removed unless
another manager still owns them. Updates (create, update, patch) give their manager the fields
whose value they changed.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Iterable, Mapping
from typing import Any

from kubectrl.apiserver._patch.patches import MERGED_PRIMITIVES, merge_key
from kubectrl.apiserver._status import StatusError

__all__ = ["Path", "fields_of", "merge_applied", "record_update", "server_side_apply"]

Path = tuple[str, ...]
_MISSING: Any = object()
_LABEL_SELECTOR = {"matchLabels", "matchExpressions"}
# Fields that are maps (map[string]string) or sets rather than structs in the built-in types.
_GRANULAR_MAPS = {
    "f:data",
    "f:binaryData",
    "f:labels",
    "f:annotations",
    "f:nodeSelector",
    "f:finalizers",
}
_SERVER_METADATA = {
    "name",
    "namespace",
    "uid",
    "resourceVersion",
    "generation",
    "creationTimestamp",
    "managedFields",
    "deletionTimestamp",
    "deletionGracePeriodSeconds",
    "selfLink",
}


def _key_json(item: Mapping[str, Any], key: str) -> str:
    return "k:" + json.dumps({key: item.get(key)}, separators=(",", ":"))


def fields_of(value: Any, path: Path = (), parent: str = "") -> set[Path]:
    """The owned-field paths of an object (leaves, keyed list items and atomic lists)."""
    out: set[Path] = set()
    if isinstance(value, dict):
        if not value and path:
            out.add(path)
        for name, item in value.items():
            if not path and name in ("apiVersion", "kind"):
                continue
            if path == ("f:metadata",) and name in _SERVER_METADATA:
                continue
            out |= _field(item, (*path, f"f:{name}"), name, parent)
    elif path:
        out.add(path)
    return out


def _field(value: Any, path: Path, name: str, parent: str) -> set[Path]:
    if name == "selector" and isinstance(value, dict) and value and set(value) <= _LABEL_SELECTOR:
        return {path}  # metav1.LabelSelector is atomic (+structType=atomic)
    if isinstance(value, dict):
        inner = fields_of(value, path, name)
        return inner if inner or path == ("f:metadata",) else {path}
    if isinstance(value, list):
        key = merge_key(name, parent)
        if name in MERGED_PRIMITIVES:
            return {(*path, "v:" + json.dumps(v)) for v in value} or {path}
        if key is not None and value and all(isinstance(i, dict) and key in i for i in value):
            out: set[Path] = set()
            for item in value:
                item_path = (*path, _key_json(item, key))
                out.add(item_path)
                out |= fields_of(item, item_path, name)
            return out
    return {path}


def value_at(obj: Any, path: Path) -> Any:
    """The value at ``path`` in ``obj`` (a sentinel when missing)."""
    node = obj
    for part in path:
        kind, _, rest = part.partition(":")
        if kind == "f" and isinstance(node, dict) and rest in node:
            node = node[rest]
        elif kind == "k" and isinstance(node, list):
            want = json.loads(rest)
            node = next(
                (
                    i
                    for i in node
                    if isinstance(i, dict) and all(i.get(k) == v for k, v in want.items())
                ),
                _MISSING,
            )
            if node is _MISSING:
                return _MISSING
        elif kind == "v" and isinstance(node, list):
            value = json.loads(rest)
            return value if value in node else _MISSING
        else:
            return _MISSING
    return node


def _delete_at(obj: Any, path: Path) -> None:
    if not path:
        return
    parent = value_at(obj, path[:-1])
    kind, _, rest = path[-1].partition(":")
    if kind == "f" and isinstance(parent, dict):
        parent.pop(rest, None)
    elif kind == "k" and isinstance(parent, list):
        want = json.loads(rest)
        parent[:] = [
            i
            for i in parent
            if not (isinstance(i, dict) and all(i.get(k) == v for k, v in want.items()))
        ]
    elif kind == "v" and isinstance(parent, list):
        value = json.loads(rest)
        parent[:] = [i for i in parent if i != value]


def _drop_empty_parents(obj: Any, path: Path, owned: set[Path]) -> None:
    # A map emptied by the removal goes too (structured-merge-diff prunes empty maps), unless
    # someone owns it as such.
    while path and path[-1].startswith("f:") and path not in owned:
        value = value_at(obj, path)
        if value != {}:
            return
        _delete_at(obj, path)
        path = path[:-1]


def _merge(current: Any, applied: Any, name: str = "", parent: str = "") -> Any:
    if not isinstance(applied, dict) or not isinstance(current, dict):
        if isinstance(applied, list) and isinstance(current, list):
            key = merge_key(name, parent)
            if name in MERGED_PRIMITIVES:
                return current + [copy.deepcopy(v) for v in applied if v not in current]
            if key is not None and all(isinstance(i, dict) and key in i for i in applied):
                out = copy.deepcopy(current)
                for item in applied:
                    index = next(
                        (
                            n
                            for n, c in enumerate(out)
                            if isinstance(c, dict) and c.get(key) == item[key]
                        ),
                        None,
                    )
                    if index is None:
                        out.append(copy.deepcopy(item))
                    else:
                        out[index] = _merge(out[index], item, name, parent)
                return out
        return copy.deepcopy(applied)
    result = copy.deepcopy(current)
    for key, value in applied.items():
        result[key] = (
            _merge(result.get(key, _MISSING), value, key, name)
            if key in result
            else copy.deepcopy(value)
        )
    return result


def merge_applied(current: Any, applied: Any) -> Any:
    """``applied`` (an apply configuration) merged into a copy of ``current``: maps field by
    field, keyed lists item by item, other values replaced; no field ownership."""
    return _merge(current, applied)


def decode(fields_v1: Mapping[str, Any], prefix: Path = ()) -> set[Path]:
    """The paths a ``fieldsV1`` tree holds."""
    out: set[Path] = set()
    for key, sub in fields_v1.items():
        if key == ".":
            out.add(prefix)
            continue
        path = (*prefix, key)
        if isinstance(sub, Mapping) and sub:
            out |= decode(sub, path)
        else:
            out.add(path)
    return out


def encode(paths: Iterable[Path]) -> dict[str, Any]:
    """A ``fieldsV1`` tree for ``paths`` (``"."`` marks a path that also has children)."""
    owned = set(paths)

    def build(prefix: Path) -> dict[str, Any]:
        children = sorted(
            {p[len(prefix)] for p in owned if len(p) > len(prefix) and p[: len(prefix)] == prefix}
        )
        node: dict[str, Any] = {".": {}} if prefix in owned and children and prefix else {}
        for key in children:
            node[key] = build((*prefix, key))
        return node

    return build(())


def _filter(paths: set[Path], subresource: str, has_status: bool) -> set[Path]:
    if subresource == "status":
        return {p for p in paths if p[:1] == ("f:status",)}
    if has_status:
        return {p for p in paths if p[:1] != ("f:status",)}
    return paths


class _Entry:
    def __init__(self, raw: Mapping[str, Any]) -> None:
        self.raw = dict(raw)
        self.paths = decode(raw.get("fieldsV1") or {})

    def to_dict(self) -> dict[str, Any]:
        out = dict(self.raw)
        out["fieldsType"] = "FieldsV1"
        out["fieldsV1"] = encode(self.paths)
        return out


def _entries(obj: Mapping[str, Any] | None) -> list[_Entry]:
    meta = (obj or {}).get("metadata") or {}
    return [_Entry(e) for e in meta.get("managedFields") or () if isinstance(e, Mapping)]


def _store(obj: dict[str, Any], entries: list[_Entry]) -> None:
    kept = [e.to_dict() for e in entries if e.paths]
    meta = obj.setdefault("metadata", {})
    if kept:
        meta["managedFields"] = kept
    else:
        meta.pop("managedFields", None)


def _same(entry: _Entry, manager: str, operation: str, subresource: str) -> bool:
    return (
        entry.raw.get("manager") == manager
        and entry.raw.get("operation") == operation
        and (entry.raw.get("subresource") or "") == subresource
    )


def _manager_label(entry: _Entry) -> str:
    text = json.dumps(entry.raw.get("manager", ""))
    if entry.raw.get("subresource"):
        text += f' with subresource "{entry.raw["subresource"]}"'
    if entry.raw.get("operation") == "Update":
        text += f" using {entry.raw.get('apiVersion', '')}"
    return text


def path_string(path: Path) -> str:
    """``.spec.containers[name="c"].image`` as structured-merge-diff prints a path."""
    out = ""
    for part in path:
        kind, _, rest = part.partition(":")
        if kind == "f":
            out += f".{rest}"
        elif kind == "k":
            out += "[" + ",".join(f"{k}={json.dumps(v)}" for k, v in json.loads(rest).items()) + "]"
        else:
            out += f"[={rest}]"
    return out


def record_update(
    old: Mapping[str, Any] | None,
    new: dict[str, Any],
    *,
    manager: str,
    api_version: str,
    time: str,
    subresource: str = "",
    has_status: bool = False,
    unstructured: bool = False,
) -> None:
    """Give ``manager`` (operation Update) the fields a create/update/patch changed.

    ``unstructured`` (custom resources): every object is a map, owned itself when created.
    """
    entries = _entries(old)
    new_paths = _filter(fields_of(new), subresource, has_status)
    old_paths = _filter(fields_of(old), subresource, has_status) if old is not None else set()
    changed: set[Path] = (
        {p for p in new_paths if value_at(old, p) != value_at(new, p)}
        if old is not None
        else new_paths
    )
    removed = old_paths - new_paths
    # An update that creates a map (not a struct) owns the map itself too (the "." entry).
    for path in list(changed):
        for end in range(1, len(path)):
            prefix = path[:end]
            granular = prefix[-1] in _GRANULAR_MAPS or (
                unstructured and prefix[-1].startswith("f:") and prefix != ("f:metadata",)
            )
            if granular and value_at(old, prefix) is _MISSING:
                changed.add(prefix)
    for entry in entries:
        entry.paths -= changed | removed
        entry.paths = {p for p in entry.paths if value_at(new, p) is not _MISSING}
    if changed:
        mine = next((e for e in entries if _same(e, manager, "Update", subresource)), None)
        if mine is None:
            raw: dict[str, Any] = {
                "manager": manager,
                "operation": "Update",
                "apiVersion": api_version,
                "time": time,
            }
            if subresource:
                raw["subresource"] = subresource
            mine = _Entry(raw)
            entries.append(mine)
        mine.raw["time"] = time
        mine.paths |= changed
    _store(new, entries)


def server_side_apply(
    current: Mapping[str, Any] | None,
    applied: Mapping[str, Any],
    *,
    manager: str,
    force: bool,
    api_version: str,
    time: str,
    subresource: str = "",
    has_status: bool = False,
) -> dict[str, Any]:
    """The object after ``manager`` applies ``applied`` to ``current`` (``None``: create).

    Raises the apiserver's 409 ``Apply failed with N conflict(s)`` :class:`StatusError`.
    """
    entries = _entries(current)
    base: dict[str, Any] = copy.deepcopy(dict(current)) if current is not None else {}
    new_set = _filter(fields_of(applied), subresource, has_status)
    conflicts: list[tuple[_Entry, Path]] = []
    for entry in entries:
        if entry.raw.get("manager") == manager and entry.raw.get("operation") == "Apply":
            continue
        for path in sorted(entry.paths & new_set):
            if path[-1].startswith("k:"):
                continue  # a list item itself: only its fields can conflict
            if value_at(base, path) != value_at(applied, path):
                conflicts.append((entry, path))
    if conflicts and not force:
        raise _conflict_error(conflicts)
    for entry, path in conflicts:
        entry.paths.discard(path)
    mine = next((e for e in entries if _same(e, manager, "Apply", subresource)), None)
    others: set[Path] = set().union(*(e.paths for e in entries if e is not mine))
    if mine is not None:
        # Shallowest first: a list item goes whole, with the defaulted fields nobody owns.
        for path in sorted(mine.paths - new_set - others, key=len):
            _delete_at(base, path)
            _drop_empty_parents(base, path[:-1], others)
    body = copy.deepcopy(dict(applied))
    if subresource == "status":
        body = {"status": body.get("status", {})}
    elif has_status:
        body.pop("status", None)
    meta = body.get("metadata") or {}
    for key in _SERVER_METADATA - {"name", "namespace"}:
        meta.pop(key, None)
    result: dict[str, Any] = _merge(base, body)
    if mine is None:
        raw: dict[str, Any] = {
            "manager": manager,
            "operation": "Apply",
            "apiVersion": api_version,
            "time": time,
        }
        if subresource:
            raw["subresource"] = subresource
        mine = _Entry(raw)
        entries.append(mine)
    mine.raw["time"] = time
    mine.raw["apiVersion"] = api_version
    mine.paths = new_set
    _store(result, entries)
    return result


def _conflict_error(conflicts: list[tuple[_Entry, Path]]) -> StatusError:
    causes = [
        {
            "reason": "FieldManagerConflict",
            "message": f"conflict with {_manager_label(entry)}",
            "field": path_string(path),
        }
        for entry, path in conflicts
    ]
    if len(conflicts) == 1:
        entry, path = conflicts[0]
        message = (
            "Apply failed with 1 conflict: conflict with "
            f"{_manager_label(entry)}: {path_string(path)}"
        )
    else:
        by_manager: dict[str, list[str]] = {}
        for entry, path in conflicts:
            by_manager.setdefault(_manager_label(entry), []).append(path_string(path))
        lines: list[str] = []
        for label in sorted(by_manager):
            lines.append(f"conflicts with {label}:")
            lines.extend(f"- {p}" for p in by_manager[label])
        message = f"Apply failed with {len(conflicts)} conflicts: " + "\n".join(lines)
    return StatusError.make(409, message, reason="Conflict", details={"causes": causes})
