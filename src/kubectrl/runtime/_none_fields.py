"""Which optional model field was ``None`` when a reconcile raised about ``NoneType``.

A model that keeps a Go CRD's optional fields has ``X | None = None`` where Go has a pointer or
an ``omitempty`` value with a zero value (``0``, ``""``, ``false``, an empty struct). A reconcile
that forgets the ``None`` raises ``TypeError: '<' not supported between instances of 'NoneType'
and 'int'`` or ``AttributeError: 'NoneType' object has no attribute 'x'``, which says neither
the model nor the field. :func:`none_field` finds them after the fact, for the controller's log:

* only for a ``TypeError`` or ``AttributeError`` whose message mentions ``NoneType``;
* from the innermost frame of the traceback outwards, it reads the source of the expression
  that failed (its exact columns on Python 3.11+, the whole line before), collects the dotted
  names in it (``widget.spec.replicas``, ``self.foo.spec.template``), and resolves each from
  the frame's local variables through pydantic model fields and plain instance attributes only
  (no property, no ``__getattr__``, nothing is called);
* the first such name that is a model field holding ``None`` is the answer.

Limits: code without a source file (a prompt, ``exec``) is not traced; a ``None`` reached
through a call, an index or a variable of another scope
(``get_spec().replicas``, ``items[0].size``, a global) is not traced; the values are those of
the frames when the error is logged (a reconcile that changed the field after reading it would
mislead, as any post-mortem would); nothing is guessed: no answer is better than a wrong one.
"""

from __future__ import annotations

import ast
import dataclasses
import linecache
import sys
import types
import typing
from typing import Any

__all__ = ["NoneField", "none_field"]

_MAX_FRAMES = 30
_MAX_SOURCE = 2000
_STOP = object()


@dataclasses.dataclass(frozen=True)
class NoneField:
    """A model field found ``None`` where the failing expression read it."""

    field: str  # "Widget.spec.replicas": the first model of the chain, then the path
    expression: str  # "w.spec.replicas", as the code spells it
    zero: str | None  # Go's zero value of the field's type, as Python ("0", '""', "Foo()")
    was_set: bool  # whether the object had the field set (to None) rather than left unset

    def describe(self) -> str:
        """The sentence the controller appends to its log line."""
        state = "set to None" if self.was_set else "unset"
        text = f"{self.field} is None ({state} on the object)"
        if self.zero is None:
            return text + ": test for None before using it"
        return (
            f"{text}: where Go reads a field without a pointer as its zero value {self.zero}, "
            f"write `{self.expression} or {self.zero}`, or test for None"
        )


def none_field(err: BaseException) -> NoneField | None:
    """The optional model field whose ``None`` raised ``err``, or ``None`` when not found."""
    if not isinstance(err, (TypeError, AttributeError)) or "NoneType" not in str(err):
        return None
    # Without pydantic loaded there is no model to blame (and importing it here would cost the
    # runtime, which does not need it, ~100 ms).
    pydantic = sys.modules.get("pydantic")
    if pydantic is None:
        return None
    model_class: type = pydantic.BaseModel
    frames: list[tuple[types.FrameType, int, int]] = []
    tb = err.__traceback__
    while tb is not None:
        frames.append((tb.tb_frame, tb.tb_lasti, tb.tb_lineno))
        tb = tb.tb_next
    for frame, lasti, lineno in reversed(frames[-_MAX_FRAMES:]):
        try:
            found = _in_frame(frame, lasti, lineno, model_class)
        except Exception:  # a post-mortem must never fail the log line it decorates
            found = None
        if found is not None:
            return found
    return None


def _in_frame(
    frame: types.FrameType, lasti: int, lineno: int, model_class: type
) -> NoneField | None:
    tree = _parse(_source(frame, lasti, lineno))
    if tree is None:
        return None
    local_names = frame.f_locals
    for node in ast.walk(tree):
        chain = _chain(node)
        if chain is None or chain[0] not in local_names:
            continue
        found = _resolve(local_names[chain[0]], chain, model_class)
        if found is not None:
            return found
    return None


def _source(frame: types.FrameType, lasti: int, lineno: int) -> str:
    code = frame.f_code
    lines = linecache.getlines(code.co_filename, frame.f_globals)
    positions = getattr(code, "co_positions", None)  # Python 3.11+
    if positions is not None and lasti >= 0:
        start, end, column, end_column = list(positions())[lasti // 2]
        if start and end and column is not None and end_column is not None:
            if end - start > 20 or end > len(lines):
                return ""
            # Columns are UTF-8 byte offsets.
            text: bytes = "".join(lines[start - 1 : end]).encode()
            tail = len(text) - len(lines[end - 1].encode()) + int(end_column)
            return text[int(column) : tail].decode(errors="replace")
    return lines[lineno - 1] if 0 < lineno <= len(lines) else ""


def _parse(source: str) -> ast.AST | None:
    text = source.strip()
    if not text or len(text) > _MAX_SOURCE:
        return None
    for candidate, mode in ((text, "eval"), (text, "exec"), (text + "\n    pass", "exec")):
        try:
            return ast.parse(candidate, mode=mode)
        except SyntaxError:
            continue
    return None


def _chain(node: ast.AST) -> list[str] | None:
    """``["w", "spec", "replicas"]`` for the expression ``w.spec.replicas``; ``None`` for anything
    but names and attributes."""
    attributes: list[str] = []
    while isinstance(node, ast.Attribute):
        attributes.append(node.attr)
        node = node.value
    if not attributes or not isinstance(node, ast.Name):
        return None
    return [node.id, *reversed(attributes)]


def _resolve(root: Any, chain: list[str], model_class: type) -> NoneField | None:
    value = root
    first_model: tuple[str, int] | None = None  # (class name, index in chain)
    if isinstance(value, model_class):
        first_model = (type(value).__name__, 0)
    for index, attribute in enumerate(chain[1:], start=1):
        if isinstance(value, model_class):
            model: Any = value
            if attribute not in type(model).model_fields:
                return None
            value = model.__dict__.get(attribute, _STOP)
            if value is _STOP:
                return None
            if value is None:
                if index != len(chain) - 1 or first_model is None:
                    return None  # the node for the shorter chain reports this one
                name, at = first_model
                return NoneField(
                    field=".".join([name, *chain[at + 1 : index + 1]]),
                    expression=".".join(chain[: index + 1]),
                    zero=_zero(type(model).model_fields[attribute].annotation, model_class),
                    was_set=attribute in model.model_fields_set,
                )
        else:
            attributes = getattr(value, "__dict__", None)
            if not isinstance(attributes, dict) or attribute not in attributes:
                return None
            value = attributes[attribute]
        if first_model is None and isinstance(value, model_class):
            first_model = (type(value).__name__, index)
    return None


def _zero(annotation: Any, model_class: type) -> str | None:
    """Go's zero value of a field's type, spelt in Python (``None`` when there is no one)."""
    while True:
        origin = typing.get_origin(annotation)
        if origin is typing.Annotated:
            annotation = typing.get_args(annotation)[0]
            continue
        if origin is typing.Union or origin is types.UnionType:
            members = [a for a in typing.get_args(annotation) if a is not type(None)]
            if len(members) != 1:
                return None
            annotation = members[0]
            continue
        break
    base = typing.get_origin(annotation) or annotation
    if base is bool:
        return "False"
    if base is int:
        return "0"
    if base is float:
        return "0.0"
    if base is str:
        return '""'
    if base is list:
        return "[]"
    if base is dict:
        return "{}"
    if isinstance(base, type) and issubclass(base, model_class):
        return f"{base.__name__}()"
    return None
