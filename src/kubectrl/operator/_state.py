"""What the operator stores on each object, and the diff its change handlers receive.

kopf keeps, on every object it handles, the object's *essence* as last handled (annotation
``kopf.zalando.org/last-handled-configuration``, ``kopf/_cogs/configs/diffbase.py``) and each
handler's progress while a change is being handled (``status.kopf.progress`` or annotations,
``kopf/_cogs/configs/progress.py``); its diff is a tuple of ``(op, field, old, new)``
(``kopf/_cogs/structs/diffs.py``). The operator does the same, in its own domain
``<operator name>.kubectrl.io``:

- ``<domain>/last-handled-configuration``: the essence (JSON) that the last completed change
  handling saw: the object without ``status``, and of ``metadata`` only the labels and the
  annotations (without the operator's own and ``kubectl.kubernetes.io/last-applied-configuration``);
- ``<domain>/progress``: while handlers of one change are not all done, a JSON object
  ``{"cause": ..., "digest": ..., "handlers": {id: {"started", "retries", "delayed",
  "success", "failure", "message"}}}``; removed once they are.
"""

from __future__ import annotations

import copy
import datetime
import hashlib
import json
from collections.abc import Mapping
from typing import Any, NamedTuple

__all__ = [
    "DiffItem",
    "diff",
    "digest",
    "essence",
    "field_path",
    "resolve",
]

_KUBECTL_LAST_APPLIED = "kubectl.kubernetes.io/last-applied-configuration"


class DiffItem(NamedTuple):
    """One difference: ``op`` is ``"add"``, ``"change"`` or ``"remove"``; ``field`` the path.

    Example::

        >>> from kubectrl.operator._state import diff
        >>> diff({"a": 1}, {"a": 2})
        (DiffItem(op='change', field=('a',), old=1, new=2),)
    """

    op: str
    field: tuple[str, ...]
    old: Any
    new: Any


def essence(obj: Mapping[str, Any], domain: str) -> dict[str, Any]:
    """The part of ``obj`` whose changes the change handlers see (see the module docs).

    Example::

        >>> essence({"metadata": {"name": "a", "labels": {"x": "1"}}, "spec": {}, "status": {}},
        ...         "op.kubectrl.io")
        {'spec': {}, 'metadata': {'labels': {'x': '1'}}}
    """
    result = {k: copy.deepcopy(v) for k, v in obj.items() if k not in ("metadata", "status")}
    meta = obj.get("metadata") or {}
    kept: dict[str, Any] = {}
    if meta.get("labels"):
        kept["labels"] = copy.deepcopy(dict(meta["labels"]))
    annotations = {
        k: v
        for k, v in (meta.get("annotations") or {}).items()
        if not k.startswith(f"{domain}/") and k != _KUBECTL_LAST_APPLIED
    }
    if annotations:
        kept["annotations"] = annotations
    if kept:
        result["metadata"] = kept
    return result


def digest(value: Any) -> str:
    """A short stable hash of a JSON value (which change a progress record belongs to).

    Example::

        >>> digest({"a": 1}) == digest({"a": 1})
        True
    """
    text = json.dumps(value, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def diff(old: Any, new: Any, field: tuple[str, ...] = ()) -> tuple[DiffItem, ...]:
    """The differences from ``old`` to ``new``, recursing into mappings (lists are compared
    whole, as kopf does); ``None`` stands for absent.

    Example::

        >>> diff(None, {"a": 1})
        (DiffItem(op='add', field=(), old=None, new={'a': 1}),)
        >>> [(d.op, d.field) for d in diff({"a": 1, "b": 2}, {"b": 3})]
        [('remove', ('a',)), ('change', ('b',))]
    """
    if old == new:
        return ()
    if old is None:
        return (DiffItem("add", field, None, new),)
    if new is None:
        return (DiffItem("remove", field, old, None),)
    if isinstance(old, Mapping) and isinstance(new, Mapping):
        items: list[DiffItem] = []
        for key in sorted({*old, *new}, key=str):
            items.extend(diff(old.get(key), new.get(key), (*field, str(key))))
        return tuple(items)
    return (DiffItem("change", field, old, new),)


def field_path(field: str | tuple[str, ...] | list[str]) -> tuple[str, ...]:
    """``"spec.size"`` or ``("spec", "size")`` as a path tuple; an empty one is a ``ValueError``.

    Example::

        >>> field_path("spec.size")
        ('spec', 'size')
    """
    path = tuple(field.split(".")) if isinstance(field, str) else tuple(field)
    if not path or any(not isinstance(p, str) or not p for p in path):
        raise ValueError(f"field must be a dotted path such as 'spec.size', not {field!r}")
    return path


def resolve(obj: Any, path: tuple[str, ...]) -> Any:
    """The value at ``path`` in nested mappings, ``None`` where any step is missing.

    Example::

        >>> resolve({"spec": {"size": 1}}, ("spec", "size"))
        1
    """
    for step in path:
        if not isinstance(obj, Mapping):
            return None
        obj = obj.get(step)
    return obj


def iso(moment: datetime.datetime) -> str:
    """``moment`` as stored in a progress record (UTC, ISO 8601)."""
    return moment.astimezone(datetime.timezone.utc).isoformat()


def parse_iso(text: str) -> datetime.datetime:
    """A progress record's timestamp back as a datetime (``ValueError`` naming it if bad)."""
    try:
        return datetime.datetime.fromisoformat(text)
    except (TypeError, ValueError) as err:
        raise ValueError(f"not an ISO 8601 timestamp: {text!r}") from err
