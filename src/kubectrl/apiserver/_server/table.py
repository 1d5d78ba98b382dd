"""``Table`` output (``meta.k8s.io/v1``): what ``kubectl get`` asks for and prints.

A client asking ``Accept: application/json;as=Table;v=v1;g=meta.k8s.io`` gets rows of cells
instead of objects: the name, the resource's printer columns (``additionalPrinterColumns``:
a JSON path into the object each) and the age, as the apiserver's CRD table convertor makes
them; each row carries the object as ``PartialObjectMetadata`` (``includeObject=Metadata``, the
default), the whole object (``Object``) or nothing (``None``). A watch asked as a Table sends
each event's object as a one-row Table.
"""

from __future__ import annotations

import datetime
import json
from collections.abc import Mapping, Sequence
from typing import Any

__all__ = ["Column", "table", "table_event", "wants_table"]

_NAME_DESCRIPTION = (
    "Name must be unique within a namespace. Is required when creating resources, although some "
    "resources may allow a client to request the generation of an appropriate name "
    "automatically. Name is primarily intended for creation idempotence and configuration "
    "definition. Cannot be updated."
)
_AGE_DESCRIPTION = (
    "CreationTimestamp is a timestamp representing the server time when this object was created."
)

#: A printer column: ``name``, ``type``, ``jsonPath``, optional ``format``, ``description``,
#: ``priority`` (``additionalPrinterColumns`` entries as a CRD version writes them).
Column = Mapping[str, Any]


def wants_table(accept: str) -> bool:
    """Whether an ``Accept`` header asks for a ``meta.k8s.io`` Table (v1 or v1beta1)."""
    for part in accept.split(","):
        params = {p.strip() for p in part.split(";")[1:]}
        if "as=Table" in params and "g=meta.k8s.io" in params:
            return True
    return False


def _definitions(columns: Sequence[Column]) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = [
        {
            "name": "Name",
            "type": "string",
            "format": "name",
            "description": _NAME_DESCRIPTION,
            "priority": 0,
        }
    ]
    for column in columns:
        out.append(
            {
                "name": column["name"],
                "type": column.get("type", "string"),
                "format": column.get("format", ""),
                "description": column.get("description", ""),
                "priority": int(column.get("priority", 0)),
            }
        )
    if not any(c["name"] == "Age" for c in columns):
        out.append(
            {
                "name": "Age",
                "type": "date",
                "format": "",
                "description": _AGE_DESCRIPTION,
                "priority": 0,
            }
        )
    return out


def _path_value(obj: Any, path: str) -> Any:
    """The value at a simple JSON path (``.spec.a.b``, ``.spec.list[0]``); ``None`` if missing."""
    node = obj
    for part in path.strip().lstrip("{").rstrip("}").split("."):
        if not part:
            continue
        name, _, index = part.partition("[")
        node = node.get(name) if isinstance(node, Mapping) else None
        if index:
            try:
                position = int(index.rstrip("]"))
            except ValueError:
                return None
            node = (
                node[position]
                if isinstance(node, list) and -len(node) <= position < len(node)
                else None
            )
    return node


def _age(timestamp: Any, now: datetime.datetime) -> str:
    """``kubectl``'s short human duration (``5s``, ``3m``, ``2d``) since an RFC 3339 time."""
    if not isinstance(timestamp, str):
        return "<unknown>"
    try:
        then = datetime.datetime.strptime(timestamp, "%Y-%m-%dT%H:%M:%SZ").replace(
            tzinfo=datetime.timezone.utc
        )
    except ValueError:
        return "<invalid>"
    seconds = int((now - then).total_seconds())
    if seconds < 0:
        return "0s"
    for size, unit in ((86400 * 365, "y"), (86400, "d"), (3600, "h"), (60, "m")):
        if seconds >= 2 * size or (unit == "m" and seconds >= 120):
            return f"{seconds // size}{unit}"
    return f"{seconds}s"


def _cell(value: Any, column: Column, now: datetime.datetime) -> Any:
    if value is None:
        return None
    kind = column.get("type", "string")
    if kind == "date":
        return _age(value, now)
    if kind == "integer" and isinstance(value, (int, float)) and not isinstance(value, bool):
        return int(value)
    if kind == "number" and isinstance(value, (int, float)) and not isinstance(value, bool):
        return value
    if kind == "boolean" and isinstance(value, bool):
        return value
    if isinstance(value, (dict, list)):
        return json.dumps(value, separators=(",", ":"))
    return str(value)


def _row(
    obj: Mapping[str, Any], columns: Sequence[Column], include: str, now: datetime.datetime
) -> dict[str, Any]:
    meta = obj.get("metadata") or {}
    cells: list[Any] = [meta.get("name", "")]
    cells += [_cell(_path_value(obj, str(c["jsonPath"])), c, now) for c in columns]
    if not any(c["name"] == "Age" for c in columns):
        cells.append(_age(meta.get("creationTimestamp"), now))
    row: dict[str, Any] = {"cells": cells}
    if include == "Object":
        row["object"] = dict(obj)
    elif include != "None":
        row["object"] = {
            "kind": "PartialObjectMetadata",
            "apiVersion": "meta.k8s.io/v1",
            "metadata": dict(meta),
        }
    return row


def table(
    objects: Sequence[Mapping[str, Any]],
    columns: Sequence[Column],
    *,
    list_meta: Mapping[str, Any] | None = None,
    include: str = "Metadata",
    now: datetime.datetime | None = None,
) -> dict[str, Any]:
    """The Table of ``objects`` (``include``: the ``includeObject`` parameter)."""
    if include not in ("Metadata", "Object", "None", ""):
        raise ValueError(f"includeObject must be None, Metadata or Object, not {include!r}")
    when = now or datetime.datetime.now(datetime.timezone.utc)
    return {
        "kind": "Table",
        "apiVersion": "meta.k8s.io/v1",
        "metadata": dict(list_meta or {}),
        "columnDefinitions": _definitions(columns),
        "rows": [_row(o, columns, include, when) for o in objects],
    }


def table_event(line: bytes, columns: Sequence[Column], include: str = "Metadata") -> bytes:
    """A watch line with its object as a one-row Table (BOOKMARK and ERROR lines as they are)."""
    event = json.loads(line)
    if event.get("type") in ("BOOKMARK", "ERROR"):
        return line
    body = table([event["object"]], columns, include=include)
    body["metadata"] = {"resourceVersion": event["object"]["metadata"].get("resourceVersion", "")}
    return json.dumps({"type": event["type"], "object": body}, separators=(",", ":")).encode() + (
        b"\n"
    )
