"""JSON values as the apiserver names and shows them in the causes of a schema violation
(shared by :mod:`kubectrl.apiserver._schema.structural` and
:mod:`kubectrl.apiserver._schema.cel`)."""

from __future__ import annotations

import json
from typing import Any

__all__ = ["json_type", "number_text", "show"]

_INT64 = (-(2**63), 2**63 - 1)


def json_type(value: Any) -> str:
    """The JSON type of a value as the apiserver names it (beyond int64 is a ``number``)."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer" if _INT64[0] <= value <= _INT64[1] else "number"
    if isinstance(value, float):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list):
        return "array"
    return "object"


def number_text(value: float) -> str:
    """A number as Go formats it in a message (3.0 as 3)."""
    if isinstance(value, float) and value.is_integer() and abs(value) < 1e21:
        return str(int(value))
    return repr(value) if isinstance(value, float) else str(value)


def show(value: Any) -> str:
    """A value in a cause's message, as Go's ``%#v`` of the field error shows it."""
    if isinstance(value, str):
        return json.dumps(value, ensure_ascii=False)
    if isinstance(value, bool):
        return "true" if value else "false"
    if value is None:
        return "null"
    if isinstance(value, (int, float)):
        return number_text(value)
    return '"' + json_type(value) + '"'
