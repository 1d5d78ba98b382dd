"""Per-kind behaviour lives in the strategies, registered once by resource; the core around
them does not branch on a resource's name.

As k8s.io/apiserver: ``pkg/registry/generic/registry/store.go`` is one store for every resource,
calling the resource's strategy (``pkg/registry/rest/create.go`` ``BeforeCreate``:
``PrepareForCreate``, then ``Validate``, ``Canonicalize``, ``WarningsOnCreate``;
``rest/update.go`` ``BeforeUpdate`` likewise) and knowing no resource by name; what a kind does
is its ``pkg/registry/<group>/<resource>/strategy.go``.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

import pytest

import kubectrl.apiserver
from kubectrl._builtin_kinds import BUILTIN_KINDS
from kubectrl._internal.clock import RealClock
from kubectrl.apiserver import _strategies as strategies
from kubectrl.apiserver._endpoints.core import APICore
from kubectrl.apiserver._resources.info import ResourceInfo
from kubectrl.apiserver._status import FeatureNotImplementedError
from kubectrl.apiserver._strategies.base import ReadOnly, Strategy
from kubectrl.apiserver._strategies.custom import CustomResources

ROOT = Path(str(kubectrl.apiserver.__file__)).parent
PLURALS = frozenset(plural for _g, _v, _k, plural, _n in BUILTIN_KINDS.values())
#: Attributes that name a resource (``info.key``, ``info.plural``, ``route.resource``...).
IDENTITY = frozenset({"key", "plural", "resource", "group"})
#: Comparisons with a resource's name the scan accepts, by file and name, with the reason.
ALLOWED = {
    # The URL grammar, not a resource's behaviour: "/api/v1/namespaces/<ns>/<resource>..."
    # names a namespace, as the apiserver's RequestInfoFactory reads it.
    ("_router.py", "namespaces"),
}


def _is_name(node: ast.AST) -> bool:
    """A resource's name as a literal: a plural, or a ``(group, plural)`` key."""
    if isinstance(node, ast.Constant):
        return isinstance(node.value, str) and node.value in PLURALS
    if isinstance(node, ast.Tuple) and len(node.elts) == 2:
        return all(
            isinstance(e, ast.Constant) and isinstance(e.value, str) for e in node.elts
        ) and _is_name(node.elts[1])
    return False


def _literal(node: ast.AST, constants: set[str]) -> bool:
    """A literal value, or a module constant bound to one."""
    if isinstance(node, ast.Name):
        return node.id in constants
    if isinstance(node, ast.Constant):
        return True
    if isinstance(node, (ast.Tuple, ast.List, ast.Set)):
        return all(_literal(e, constants) for e in node.elts)
    return False


def _module_constants(tree: ast.Module) -> set[str]:
    names: set[str] = set()
    for stmt in tree.body:
        targets = stmt.targets if isinstance(stmt, ast.Assign) else []
        if isinstance(stmt, ast.AnnAssign) and stmt.value is not None:
            targets = [stmt.target]
        value = getattr(stmt, "value", None)
        if value is None:
            continue
        if isinstance(value, ast.Call) and getattr(value.func, "id", "") in ("frozenset", "set"):
            value = value.args[0] if value.args else ast.Constant(None)
        if isinstance(value, (ast.Dict, ast.Set, ast.Tuple, ast.List, ast.Constant)):
            names.update(t.id for t in targets if isinstance(t, ast.Name))
    return names


def resource_branches(root: Path) -> Iterator[tuple[str, int, str]]:
    """``(file, line, source)`` of every place outside ``_strategies/`` that knows a resource
    by its name: a resource literal (a plural compared, a ``(group, plural)`` key anywhere, as
    in a table keyed by resource), or a resource's identity (``x.key``, ``x.plural``,
    ``x.resource``, ``x.group``) compared with a literal or a module constant."""
    for path in sorted(root.rglob("*.py")):
        relative = path.relative_to(root)
        if relative.parts[0] == "_strategies":
            continue
        text = path.read_text(encoding="utf-8")
        tree = ast.parse(text)
        constants = _module_constants(tree)
        for node in ast.walk(tree):
            found = False
            if isinstance(node, ast.Tuple) and _is_name(node):
                found = True
            elif isinstance(node, ast.Compare):
                sides = [node.left, *node.comparators]
                named = [s for s in sides if _is_name(s) or _contains_name(s)]
                if named:
                    value = next((s.value for s in named if isinstance(s, ast.Constant)), None)
                    found = (relative.as_posix(), value) not in ALLOWED
                identity = any(isinstance(s, ast.Attribute) and s.attr in IDENTITY for s in sides)
                if identity and any(_literal(s, constants) for s in sides):
                    found = True
            if found:
                line = getattr(node, "lineno", 0)
                yield relative.as_posix(), line, ast.get_source_segment(text, node) or ""


def _contains_name(node: ast.AST) -> bool:
    if isinstance(node, (ast.Tuple, ast.List, ast.Set)):
        return any(_is_name(e) for e in node.elts)
    return False


def test_the_core_branches_on_no_resource_name_outside_the_strategies() -> None:
    found = sorted(set(resource_branches(ROOT)))
    assert not found, "per-kind behaviour outside _strategies/ (give it to the strategy):\n" + (
        "\n".join(f"{path}:{line}: {source}" for path, line, source in found)
    )


def test_the_scan_finds_what_it_looks_for(tmp_path: Path) -> None:
    """The shapes the store, the defaults and the validation branched by before the
    strategies."""
    (tmp_path / "mod.py").write_text(
        "\n".join(
            [
                "_TABLE = {('apps', 'deployments'): 1}",
                "_NAMES = frozenset({'x'})",
                "def f(info, resource, key):",
                "    if info.key == ('batch', 'cronjobs'): pass",
                "    if info.key in _NAMES: pass",
                "    if resource == 'daemonsets': pass",
                "    if info.plural != 'pods': pass",
                "    if info.group in _NAMES: pass",
                "    if info.key == other.key: pass",  # two variables: not a name
                "    if kind in ('move', 'copy'): pass",  # not a resource
            ]
        ),
        encoding="utf-8",
    )
    lines = sorted(line for _path, line, _source in resource_branches(tmp_path))
    assert lines == [1, 4, 4, 5, 6, 7, 8]


def test_every_builtin_resource_has_one_strategy_and_is_described_by_it() -> None:
    infos = strategies.builtin_resources()
    assert (
        len({i.key for i in infos})
        == len(infos)
        == len({(g, p) for g, _v, _k, p, _n in BUILTIN_KINDS.values()})
    )
    registered = strategies.strategies()
    assert len({s.resource for s in registered}) == len(registered)
    for info in infos:
        strategy = strategies.for_resource(info)
        assert strategy.resource == info.key
        assert (info.status, info.scale is not None, info.generation) == (
            strategy.status,
            strategy.scale,
            strategy.generation,
        )
        assert info.short_names == list(strategy.short_names)
        assert info.field_labels == strategy.field_labels
    writable = sorted(s.resource for s in registered if s.writable)
    assert len(writable) == 27
    assert not any(isinstance(s, ReadOnly) and s.writable for s in registered)


def test_custom_resources_share_one_strategy() -> None:
    crd = ResourceInfo("example.com", ["v1"], "widgets", "Widget", True, crd=True)
    other = ResourceInfo("example.com", ["v1"], "gadgets", "Gadget", True, crd=True)
    assert strategies.for_resource(crd) is strategies.for_resource(other)
    assert isinstance(strategies.for_resource(crd), CustomResources)


def test_a_builtin_kind_without_a_strategy_is_read_only() -> None:
    core = APICore(RealClock())
    info = core.registry.get(("storage.k8s.io", "storageclasses"))
    assert info is not None
    strategy = strategies.for_resource(info)
    assert isinstance(strategy, Strategy)
    assert not strategy.writable
    with pytest.raises(FeatureNotImplementedError, match="StorageClass"):
        core.store.create(info, "v1", None, {"metadata": {"name": "a"}}, manager=None)
