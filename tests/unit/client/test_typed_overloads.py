"""The blocking Client's typed overloads declare the same parameters as AsyncClient's.

At run time each blocking verb is derived from the async one (one declaration). For the type
checker the overloads have to be spelled out twice (ParamSpec does not carry @overload); this
test keeps the two spellings equal: same overload count, parameter names, kinds, annotations
and defaults, and the same return types once ``AsyncIterator`` is read as ``Iterator``.
"""

from __future__ import annotations

import ast
from pathlib import Path

import kubectrl.client as client_pkg

TYPED_VERBS = (
    "get",
    "list",
    "list_pages",
    "list_items",
    "create",
    "update",
    "update_status",
    "patch",
    "apply",
)
SRC = Path(client_pkg.__file__).parent


def _overloads(
    path: Path, class_name: str
) -> dict[str, list[ast.FunctionDef | ast.AsyncFunctionDef]]:
    tree = ast.parse(path.read_text())
    found: dict[str, list[ast.FunctionDef | ast.AsyncFunctionDef]] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.ClassDef) and node.name == class_name:
            for fn in ast.walk(node):
                if isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)) and any(
                    ast.unparse(d) == "overload" for d in fn.decorator_list
                ):
                    found.setdefault(fn.name, []).append(fn)
    return found


def _shape(fn: ast.FunctionDef | ast.AsyncFunctionDef) -> tuple[object, ...]:
    args = fn.args
    positional = [(a.arg, ast.unparse(a.annotation) if a.annotation else "") for a in args.args]
    keyword = [
        (a.arg, ast.unparse(a.annotation) if a.annotation else "", ast.unparse(d) if d else None)
        for a, d in zip(args.kwonlyargs, args.kw_defaults, strict=True)
    ]
    returns = ast.unparse(fn.returns) if fn.returns else ""
    return positional, keyword, returns.replace("AsyncIterator[", "Iterator[")


def test_blocking_overloads_mirror_the_async_ones() -> None:
    asynchronous = _overloads(SRC / "_async_client.py", "AsyncClient")
    blocking = _overloads(SRC / "_sync_client.py", "Client")
    for verb in TYPED_VERBS:
        assert verb in asynchronous, verb
        assert verb in blocking, verb
        assert [_shape(f) for f in blocking[verb]] == [_shape(f) for f in asynchronous[verb]], verb
    assert set(blocking) == set(TYPED_VERBS)
