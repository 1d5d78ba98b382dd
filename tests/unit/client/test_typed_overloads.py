"""The client interfaces are declared once, and every client implements exactly them.

Python's type system cannot turn an overloaded ``async def`` protocol into its blocking twin, so
:mod:`kubectrl.client._interfaces` holds one written copy of each blocking protocol; these
tests keep the copies equal (overloads, parameters, defaults, return types modulo
``Awaitable``/``AsyncIterator``), keep overload blocks out of the client classes, keep
``**kwargs`` off their public verbs, and check that every implementation takes exactly the
protocol's parameters (mypy checks they fit; this also refuses an extra keyword).
"""

from __future__ import annotations

import ast
import inspect
import re
from pathlib import Path
from typing import Any

import pytest

import kubectrl.client as client_pkg
import kubectrl.runtime as runtime_pkg
from kubectrl.client import _interfaces
from kubectrl.client._async_client import AsyncClient
from kubectrl.client._subresource import (
    BlockingClientStatusWriter,
    BlockingClientSubResourceClient,
    ClientStatusWriter,
    ClientSubResourceClient,
)
from kubectrl.client._sync_client import BlockingClient
from kubectrl.runtime._cache_client import BlockingCachedClient, CachedClient

CLIENT_SRC = Path(client_pkg.__file__).parent
RUNTIME_SRC = Path(runtime_pkg.__file__).parent
INTERFACES = CLIENT_SRC / "_interfaces.py"

#: Each asyncio protocol and its blocking twin.
TWINS = (
    ("Reader", "BlockingReader"),
    ("Pager", "BlockingPager"),
    ("Writer", "BlockingWriter"),
    ("StatusWriter", "BlockingStatusWriter"),
    ("SubResourceClient", "BlockingSubResourceClient"),
    ("StatusClient", "BlockingStatusClient"),
    ("KubeClient", "BlockingKubeClient"),
)
#: What the blocking declarations say for what the asyncio ones say.
_BLOCKING_NAMES = {
    "AsyncIterator": "Iterator",
    "StatusWriter": "BlockingStatusWriter",
    "SubResourceClient": "BlockingSubResourceClient",
    "Reader": "BlockingReader",
    "Writer": "BlockingWriter",
    "StatusClient": "BlockingStatusClient",
}

Function = ast.FunctionDef | ast.AsyncFunctionDef


def _classes(path: Path) -> dict[str, ast.ClassDef]:
    tree = ast.parse(path.read_text())
    return {node.name: node for node in tree.body if isinstance(node, ast.ClassDef)}


def _methods(cls: ast.ClassDef) -> dict[str, list[Function]]:
    found: dict[str, list[Function]] = {}
    for node in cls.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            found.setdefault(node.name, []).append(node)
    return found


def _blocking_text(text: str) -> str:
    return re.sub(
        r"\b(" + "|".join(_BLOCKING_NAMES) + r")\b", lambda m: _BLOCKING_NAMES[m[1]], text
    )


def _shape(fn: Function, *, blocking: bool) -> tuple[object, ...]:
    args = fn.args

    def text(node: ast.expr | None) -> str | None:
        if node is None:
            return None
        return ast.unparse(node) if blocking else _blocking_text(ast.unparse(node))

    return (
        [ast.unparse(d) for d in fn.decorator_list],
        [(a.arg, text(a.annotation)) for a in args.posonlyargs],
        [(a.arg, text(a.annotation)) for a in args.args],
        [text(d) for d in args.defaults],
        [
            (a.arg, text(a.annotation), text(d))
            for a, d in zip(args.kwonlyargs, args.kw_defaults, strict=True)
        ],
        args.vararg is not None,
        args.kwarg is not None,
        text(fn.returns),
    )


def test_the_blocking_interfaces_mirror_the_asyncio_ones() -> None:
    classes = _classes(INTERFACES)
    for asyncio_name, blocking_name in TWINS:
        asynchronous = _methods(classes[asyncio_name])
        blocking = _methods(classes[blocking_name])
        assert set(blocking) == set(asynchronous), blocking_name
        bases = [_blocking_text(ast.unparse(b)) for b in classes[asyncio_name].bases]
        assert [ast.unparse(b) for b in classes[blocking_name].bases] == bases, blocking_name
        for name, declarations in asynchronous.items():
            twins = blocking[name]
            assert len(twins) == len(declarations), f"{blocking_name}.{name}: overload count"
            for declaration, twin in zip(declarations, twins, strict=True):
                where = f"{blocking_name}.{name} vs {asyncio_name}.{name}"
                assert isinstance(twin, ast.FunctionDef), f"{where}: blocking is a def"
                returns_iterator = ast.unparse(declaration.returns or ast.Constant(None))
                assert (
                    isinstance(declaration, ast.AsyncFunctionDef)
                    or returns_iterator.startswith("AsyncIterator[")
                    or name in ("status", "subresource")
                ), f"{where}: asyncio is async"
                assert _shape(twin, blocking=True) == _shape(declaration, blocking=False), where


def test_the_comparison_notices_a_drifted_twin() -> None:
    # The check above must be able to fail: a twin with one default changed differs.
    async_fn = ast.parse("async def f(self, *, limit: int | None = 500) -> M: ...").body[0]
    drifted = ast.parse("def f(self, *, limit: int | None = 50) -> M: ...").body[0]
    assert isinstance(async_fn, ast.AsyncFunctionDef)
    assert isinstance(drifted, ast.FunctionDef)
    assert _shape(drifted, blocking=True) != _shape(async_fn, blocking=False)


CLIENT_CLASSES = (
    (CLIENT_SRC / "_async_client.py", "AsyncClient"),
    (CLIENT_SRC / "_sync_client.py", "BlockingClient"),
    (CLIENT_SRC / "_subresource.py", "ClientStatusWriter"),
    (CLIENT_SRC / "_subresource.py", "ClientSubResourceClient"),
    (CLIENT_SRC / "_subresource.py", "BlockingClientStatusWriter"),
    (CLIENT_SRC / "_subresource.py", "BlockingClientSubResourceClient"),
    (RUNTIME_SRC / "_cache_client.py", "CachedClient"),
    (RUNTIME_SRC / "_cache_client.py", "BlockingCachedClient"),
)


@pytest.mark.parametrize(("path", "name"), CLIENT_CLASSES, ids=[n for _, n in CLIENT_CLASSES])
def test_client_classes_declare_no_overloads_and_no_kwargs_any(path: Path, name: str) -> None:
    cls = _classes(path)[name]
    for node in ast.walk(cls):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            decorators = [ast.unparse(d) for d in node.decorator_list]
            assert "overload" not in decorators, f"{name}.{node.name} re-declares overloads"
            if not node.name.startswith("__"):
                assert node.args.kwarg is None, f"{name}.{node.name} takes **{node.args.kwarg}"


def _protocol_parameters(protocol: str) -> dict[str, list[list[tuple[str, str, Any]]]]:
    """Each method's parameters (name, kind, default) per overload, from the source."""
    classes = _classes(INTERFACES)
    namespace = vars(_interfaces)
    out: dict[str, list[list[tuple[str, str, Any]]]] = {}

    def collect(class_name: str) -> None:
        cls = classes[class_name]
        for base in cls.bases:
            if ast.unparse(base) in classes:
                collect(ast.unparse(base))
        for name, declarations in _methods(cls).items():
            shapes = []
            for fn in declarations:
                args = fn.args
                params: list[tuple[str, str, Any]] = []
                defaults = [None] * (len(args.args) - len(args.defaults)) + list(args.defaults)
                for a, d in zip(args.args, defaults, strict=True):
                    value = eval(ast.unparse(d), namespace) if d else inspect.Parameter.empty
                    params.append((a.arg, "POSITIONAL_OR_KEYWORD", value))
                for a, d in zip(args.kwonlyargs, args.kw_defaults, strict=True):
                    value = eval(ast.unparse(d), namespace) if d else inspect.Parameter.empty
                    params.append((a.arg, "KEYWORD_ONLY", value))
                shapes.append(params)
            out[name] = shapes

    collect(protocol)
    return out


def _runtime_parameters(fn: Any) -> list[tuple[str, str, Any]]:
    return [(p.name, p.kind.name, p.default) for p in inspect.signature(fn).parameters.values()]


IMPLEMENTATIONS = (
    (AsyncClient, "KubeClient"),
    (AsyncClient, "Pager"),
    (BlockingClient, "BlockingKubeClient"),
    (BlockingClient, "BlockingPager"),
    (CachedClient, "KubeClient"),
    (BlockingCachedClient, "BlockingKubeClient"),
    (ClientStatusWriter, "StatusWriter"),
    (BlockingClientStatusWriter, "BlockingStatusWriter"),
    (ClientSubResourceClient, "SubResourceClient"),
    (BlockingClientSubResourceClient, "BlockingSubResourceClient"),
)


@pytest.mark.parametrize(
    ("cls", "protocol"), IMPLEMENTATIONS, ids=[f"{c.__name__}-{p}" for c, p in IMPLEMENTATIONS]
)
def test_each_implementation_takes_exactly_the_protocol_parameters(
    cls: type[Any], protocol: str
) -> None:
    for name, overloads in _protocol_parameters(protocol).items():
        implementation = _runtime_parameters(getattr(cls, name))
        # Every overload names the same keywords with the same defaults; the implementation
        # takes those (its first parameters are the union of the overloads' annotations).
        for overload_params in overloads:
            assert [(n, k) for n, k, _ in implementation] == [
                (n, k) for n, k, _ in overload_params
            ], f"{cls.__name__}.{name}"
            assert [d for *_, d in implementation] == [d for *_, d in overload_params], (
                f"{cls.__name__}.{name}: defaults"
            )


def test_runtime_public_verbs_are_the_implementations() -> None:
    assert AsyncClient.get is AsyncClient._get  # type: ignore[comparison-overlap]
    assert CachedClient.patch is CachedClient._patch  # type: ignore[comparison-overlap]
    assert BlockingClient.list_items is BlockingClient._list_items  # type: ignore[comparison-overlap]
    assert (BlockingClient.get.__name__, BlockingClient.get.__qualname__) == ("get", "get")
