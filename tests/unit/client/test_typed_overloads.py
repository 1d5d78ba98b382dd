"""The client interfaces are declared once, and every client implements exactly them.

The asyncio protocols in :mod:`kubectrl.client._interfaces` are the one written declaration;
their blocking twins in :mod:`kubectrl.client._interfaces_blocking` are generated from them by
``scripts/unasync.py`` (``nox -s lint`` runs its ``--check``). These tests check that the
generated module is what the script makes of the source today (compared as syntax trees, so
without the formatter), keep overload blocks out of the client classes, keep their verbs'
``**options`` typed by a bundle, and check that every implementation takes exactly the
protocol's parameters and bundle (mypy checks they fit; this also refuses an extra keyword).
"""

from __future__ import annotations

import ast
import importlib.util
import inspect
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

import kubectrl.client as client_pkg
import kubectrl.runtime as runtime_pkg
from kubectrl.client import _interfaces, _interfaces_blocking
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
BLOCKING_INTERFACES = CLIENT_SRC / "_interfaces_blocking.py"
UNASYNC = Path(__file__).resolve().parents[3] / "scripts" / "unasync.py"

Function = ast.FunctionDef | ast.AsyncFunctionDef


def _unasync() -> ModuleType:
    spec = importlib.util.spec_from_file_location("unasync", UNASYNC)
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules.setdefault("unasync", module)
    spec.loader.exec_module(module)
    return module


def _classes(path: Path) -> dict[str, ast.ClassDef]:
    tree = ast.parse(path.read_text())
    return {node.name: node for node in tree.body if isinstance(node, ast.ClassDef)}


def _methods(cls: ast.ClassDef) -> dict[str, list[Function]]:
    found: dict[str, list[Function]] = {}
    for node in cls.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            found.setdefault(node.name, []).append(node)
    return found


def _tree(text: str) -> str:
    """The classes of ``text`` as a syntax tree, string constants' whitespace collapsed (the
    generator folds docstring lines that its longer names pushed past the line limit)."""
    tree = ast.parse(text)
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            node.value = " ".join(node.value.split())
    return "\n".join(ast.dump(n) for n in tree.body if isinstance(n, ast.ClassDef))


def _generated_from(source: str) -> str:
    unasync = _unasync()
    lines = source.splitlines()
    marker = next(n for n, line in enumerate(lines, 1) if line.startswith(unasync.MARKER))
    names = unasync._protocols(ast.parse(source), marker)
    return str(unasync.blocking_body(source, marker, names))


def test_the_blocking_interfaces_are_generated_from_the_asyncio_ones() -> None:
    assert _tree(BLOCKING_INTERFACES.read_text()) == _tree(
        _generated_from(INTERFACES.read_text())
    ), "src/kubectrl/client/_interfaces_blocking.py is stale: run python scripts/unasync.py"
    # every protocol has its twin, with the same verbs
    for name in _interfaces.__all__:
        if name == "documented_by":
            continue
        twin = getattr(_interfaces_blocking, f"Blocking{name}")
        assert set(_methods(_classes(BLOCKING_INTERFACES)[twin.__name__])) == set(
            _methods(_classes(INTERFACES)[name])
        )


def test_the_comparison_notices_a_drifted_twin() -> None:
    # The check above must be able to fail: a source with one option bundle changed differs.
    source = INTERFACES.read_text()
    drifted = source.replace("**options: Unpack[DeleteOptions]", "**options: Unpack[GetOptions]")
    assert drifted != source
    assert _tree(_generated_from(drifted)) != _tree(_generated_from(source))


def test_the_interface_is_declared_in_half_the_lines_it_took_when_copied() -> None:
    # 1,578 lines when every verb's keywords were written out in three overloads and the
    # blocking protocols were hand-copied; the declarations and their generated twins are
    # now held to half of that.
    lines = sum(len(p.read_text().splitlines()) for p in (INTERFACES, BLOCKING_INTERFACES))
    assert lines <= 1578 // 2


def test_the_generator_makes_blocking_declarations() -> None:
    text = _generated_from(INTERFACES.read_text())
    for asynchronous in ("async def", "AsyncIterator", "await "):
        assert asynchronous not in text
    assert "class BlockingWriter(Protocol)" in text
    assert "class BlockingKubeClient(BlockingReader, BlockingWriter, BlockingStatusClient" in text
    assert "def status(self) -> BlockingStatusWriter:" in text


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
def test_client_classes_declare_no_overloads_and_only_typed_options(path: Path, name: str) -> None:
    cls = _classes(path)[name]
    for node in ast.walk(cls):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            decorators = [ast.unparse(d) for d in node.decorator_list]
            assert "overload" not in decorators, f"{name}.{node.name} re-declares overloads"
            kwarg = node.args.kwarg
            if kwarg is not None and not node.name.startswith("__"):
                annotation = ast.unparse(kwarg.annotation) if kwarg.annotation else ""
                assert (annotation.startswith("Unpack[") and annotation.endswith("Options]")) or (
                    annotation == "Unpack[_Scope]"
                ), f"{name}.{node.name} takes **{kwarg.arg}: {annotation or 'untyped'}"


def _protocol_parameters(protocol: str) -> dict[str, list[list[tuple[str, str, Any]]]]:
    """Each method's parameters (name, kind, default, and the options' bundle) per overload,
    from the source."""
    path = BLOCKING_INTERFACES if protocol.startswith("Blocking") else INTERFACES
    classes = _classes(path)
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
                if args.kwarg is not None:
                    bundle = ast.unparse(args.kwarg.annotation) if args.kwarg.annotation else ""
                    params.append((args.kwarg.arg, "VAR_KEYWORD", bundle))
                shapes.append(params)
            out[name] = shapes

    collect(protocol)
    return out


def _runtime_parameters(fn: Any) -> list[tuple[str, str, Any]]:
    return [
        (p.name, p.kind.name, p.annotation if p.kind is p.VAR_KEYWORD else p.default)
        for p in inspect.signature(fn).parameters.values()
    ]


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
