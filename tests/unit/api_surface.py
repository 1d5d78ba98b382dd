"""The public API surface of kubectrl as text: every public module, its exports and signatures.

``tests/unit/test_api_surface.py`` compares it with the committed ``api_surface.txt``, so a change
to the public API is a visible diff in review. After a deliberate change, regenerate the file
(from the repository's root)::

    python -m tests.unit.api_surface --update

One line per public name of each public module (a module whose dotted path has no part starting
with ``_``): classes with their constructor signature and each public method, property and
attribute they define (inherited ones too, when defined in kubectrl), functions with their
signature, constants with their value, and re-exports (``kubectrl.Manager``) as the public path
they come from. Annotations are kept as written in the source (the library uses postponed
annotations), so the text is the same on every Python version the suite runs on.
"""

from __future__ import annotations

import argparse
import ast
import dataclasses
import enum
import importlib
import inspect
import pkgutil
import re
import sys
import types
import typing
from pathlib import Path
from typing import Any

import kubectrl

SNAPSHOT = Path(__file__).with_name("api_surface.txt")
UPDATE_COMMAND = "python -m tests.unit.api_surface --update"

_ADDRESS = re.compile(r" at 0x[0-9a-fA-F]+")


def public_modules() -> list[str]:
    """Every importable public module of the package, sorted (``kubectrl`` first)."""
    names = ["kubectrl"]
    for info in pkgutil.walk_packages(kubectrl.__path__, "kubectrl."):
        if any(part.startswith("_") for part in info.name.split(".")):
            continue
        names.append(info.name)
    return sorted(names)


def exported_names(module: types.ModuleType) -> list[str]:
    """``__all__`` when the module has one, else its public names defined there."""
    exported = getattr(module, "__all__", None)
    if exported is not None:
        return list(exported)
    return sorted(
        name
        for name, value in vars(module).items()
        if not name.startswith("_") and getattr(value, "__module__", None) == module.__name__
    )


def _annotation(annotation: Any) -> str:
    if isinstance(annotation, str):
        return annotation
    if isinstance(annotation, typing.ForwardRef):
        return annotation.__forward_arg__
    if isinstance(annotation, type) and not isinstance(annotation, types.GenericAlias):
        return annotation.__qualname__
    return _ADDRESS.sub("", repr(annotation)).replace("typing.", "")


def _value(value: Any) -> str:
    if isinstance(value, enum.Enum):
        return f"{type(value).__qualname__}.{value.name}"
    if isinstance(value, type) and not isinstance(value, types.GenericAlias):
        return value.__qualname__
    if callable(value) and hasattr(value, "__qualname__"):
        return str(value.__qualname__)
    return _ADDRESS.sub("", repr(value))


def signature(obj: Any) -> str:
    """``(a: int, /, b: str = 'x', *, c: bool = False) -> None`` as the source spells it."""
    try:
        sig = inspect.signature(obj)
    except (TypeError, ValueError):
        return "(...)"
    parts: list[str] = []
    seen_keyword_only = False
    previous_positional_only = False
    for param in sig.parameters.values():
        if previous_positional_only and param.kind is not param.POSITIONAL_ONLY:
            parts.append("/")
        previous_positional_only = param.kind is param.POSITIONAL_ONLY
        if param.kind is param.KEYWORD_ONLY and not seen_keyword_only:
            parts.append("*")
            seen_keyword_only = True
        text = param.name
        if param.kind is param.VAR_POSITIONAL:
            text = "*" + text
            seen_keyword_only = True
        elif param.kind is param.VAR_KEYWORD:
            text = "**" + text
        if param.annotation is not param.empty:
            text += f": {_annotation(param.annotation)}"
        if param.default is not param.empty:
            text += f" = {_value(param.default)}"
        parts.append(text)
    if previous_positional_only:
        parts.append("/")
    out = f"({', '.join(parts)})"
    if sig.return_annotation is not sig.empty:
        out += f" -> {_annotation(sig.return_annotation)}"
    return out


def _defined_in_kubectrl(cls: type, name: str) -> tuple[type, Any] | None:
    for klass in cls.__mro__:
        if name in vars(klass):
            if not klass.__module__.startswith("kubectrl"):
                return None
            return klass, vars(klass)[name]
    return None


def _class_lines(cls: type) -> list[str]:
    lines: list[str] = []
    if issubclass(cls, enum.Enum):
        lines.extend(f"    member {member.name} = {member.value!r}" for member in cls)
    for name in sorted(dir(cls)):
        if name.startswith("_"):
            continue
        found = _defined_in_kubectrl(cls, name)
        if found is None:
            continue
        _, raw = found
        if issubclass(cls, enum.Enum) and isinstance(getattr(cls, name, None), cls):
            continue
        if isinstance(raw, property):
            ret = signature(raw.fget).rsplit(" -> ", 1)
            lines.append(f"    property {name}" + (f" -> {ret[1]}" if len(ret) == 2 else ""))
        elif isinstance(raw, (classmethod, staticmethod)):
            kind = "classmethod" if isinstance(raw, classmethod) else "staticmethod"
            lines.append(f"    {kind} {name}{signature(getattr(cls, name))}")
        elif inspect.isfunction(raw) or inspect.ismethoddescriptor(raw) or callable(raw):
            prefix = "async def" if inspect.iscoroutinefunction(raw) else "def"
            lines.append(f"    {prefix} {name}{signature(raw)}")
        else:
            lines.append(f"    attribute {name}")
    return lines


def _describe(module: types.ModuleType, name: str, value: Any, homes: dict[int, str]) -> list[str]:
    home = homes.get(id(value))
    if home is not None and home != f"{module.__name__}.{name}":
        return [f"  {name} = {home}"]
    # kubectrl's lazy re-exports of type aliases (Int32 ...) name the public module they are from.
    source = getattr(module, "_LAZY", {}).get(name, "")
    if source and not source.rsplit(".", 1)[-1].startswith("_") and not isinstance(value, type):
        return [f"  {name} = {source}.{name}"]
    if isinstance(value, types.ModuleType):
        return [f"  module {name}"]
    # Before classes: on Python 3.10, isinstance(Callable[[X], Y], type) is true.
    if isinstance(value, types.GenericAlias) or (
        not isinstance(value, type) and _is_typing_form(value)
    ):
        return [f"  alias {name} = {_alias_source(module, name) or _annotation(value)}"]
    if isinstance(value, type):
        bases = ", ".join(base.__qualname__ for base in value.__bases__)
        if issubclass(value, BaseException):
            head = f"  exception {name}({bases})"
        elif issubclass(value, enum.Enum):
            head = f"  enum {name}({bases})"
        elif getattr(value, "_is_protocol", False):
            head = f"  protocol {name}"
        elif isinstance(getattr(value, "model_fields", None), dict):
            head = f"  class {name}{_model_signature(value)}"
        else:
            head = f"  class {name}{signature(value)}"
        return [head, *_class_lines(value)]
    if "fixture" in type(value).__name__.lower() or hasattr(value, "_pytestfixturefunction"):
        return [f"  fixture {name}"]
    if inspect.isfunction(value) or inspect.isbuiltin(value):
        prefix = "async def" if inspect.iscoroutinefunction(value) else "def"
        return [f"  {prefix} {name}{signature(value)}"]
    if isinstance(value, (str, int, float, bool, tuple, frozenset, type(None))):
        return [f"  constant {name} = {_value(value)}"]
    if dataclasses.is_dataclass(value) and "<" not in repr(value):
        return [f"  constant {name} = {_value(value)}"]
    return [f"  {name}: instance of {type(value).__qualname__}"]


def _model_signature(cls: Any) -> str:
    """A pydantic model's fields as its constructor takes them, annotations as written (pydantic's
    own signature shows its evaluated metadata, which changes with pydantic's version)."""
    parts = ["*"]
    for field_name, field in cls.model_fields.items():
        written = next(
            (
                klass.__annotations__[field_name]
                for klass in cls.__mro__
                if field_name in getattr(klass, "__annotations__", {})
            ),
            field.annotation,
        )
        text = f"{field.alias or field_name}: {_annotation(written)}"
        if field.default_factory is not None:
            text += " = <factory>"
        elif not field.is_required():
            text += f" = {_value(field.default)}"
        parts.append(text)
    return f"({', '.join(parts)})" if len(parts) > 1 else "()"


def _alias_source(module: types.ModuleType, name: str) -> str | None:
    """The right-hand side of ``name = ...`` as written where it is defined (a type alias's repr
    differs between Python versions; its source does not)."""
    candidates = [module]
    if hasattr(module, "__path__"):
        candidates += [
            importlib.import_module(f"{module.__name__}.{info.name}")
            for info in pkgutil.iter_modules(module.__path__)
            if info.name.startswith("_") and f"{module.__name__}.{info.name}" in sys.modules
        ]
    for candidate in candidates:
        try:
            tree = ast.parse(inspect.getsource(candidate))
        except (OSError, TypeError):
            continue
        for node in tree.body:
            if isinstance(node, ast.Assign) and any(
                isinstance(target, ast.Name) and target.id == name for target in node.targets
            ):
                return ast.unparse(node.value)
            if (
                isinstance(node, ast.AnnAssign)
                and isinstance(node.target, ast.Name)
                and node.target.id == name
                and node.value is not None
            ):
                return ast.unparse(node.value)
    return None


def _is_typing_form(value: Any) -> bool:
    module = getattr(type(value), "__module__", "")
    return module in ("typing", "types", "typing_extensions") or isinstance(
        value, types.GenericAlias
    )


def render() -> str:
    """The whole surface as text (what ``api_surface.txt`` holds)."""
    modules = [importlib.import_module(name) for name in public_modules()]
    # Where each class and function is defined publicly: the module it reports (``__module__``),
    # so a re-export elsewhere (``kubectrl.Manager``) is listed as a pointer, not twice.
    homes: dict[int, str] = {}
    for module in modules:
        for name in exported_names(module):
            value = getattr(module, name)
            if (isinstance(value, type) or callable(value)) and getattr(
                value, "__module__", None
            ) == module.__name__:
                homes.setdefault(id(value), f"{module.__name__}.{name}")
    out = [
        "# The public API of kubectrl, checked by tests/unit/test_api_surface.py.",
        f"# Regenerate after a deliberate change: {UPDATE_COMMAND}",
    ]
    for module in modules:
        out.append("")
        out.append(f"module {module.__name__}")
        for name in exported_names(module):
            out.extend(_describe(module, name, getattr(module, name), homes))
    return "\n".join(out) + "\n"


def main(argv: list[str] | None = None) -> int:
    """``--update`` writes the snapshot; without it, print the surface."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--update", action="store_true", help=f"rewrite {SNAPSHOT.name}")
    args = parser.parse_args(argv)
    text = render()
    if args.update:
        SNAPSHOT.write_text(text, encoding="utf-8")
        sys.stdout.write(f"wrote {SNAPSHOT}\n")
    else:
        sys.stdout.write(text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
