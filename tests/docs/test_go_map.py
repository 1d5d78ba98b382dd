"""docs/guides/go-map.md, row by row: every kubectrl name a row gives exists where it says.

The page's blocks run (tests/docs/test_docs_blocks.py); its tables are checked here. In the
kubectrl column of each table row, every code span is read:

* a dotted ``kubectrl.…`` name must import (``kubectrl.conditions.set_status_condition``);
* a span that starts with a name called or given bare (``Builder(manager)``,
  ``generation_changed``) names something a public kubectrl module exports;
* ``manager.x``, ``client.x``, ``informer.x``, ``controller.x``: ``x`` is an attribute of
  ``Manager``, ``AsyncClient``, ``Informer``, ``Controller``; a chained call
  (``Builder(manager).for_(Foo).owns(...)``) names methods of what it starts from.

Spans that are Python (``or 0``, ``await``), keywords, builtins or names of the Go column are
skipped. What a row says beyond its names is shown by the tests each section cites.
"""

from __future__ import annotations

import builtins
import contextlib
import importlib
import inspect
import keyword
import re
from functools import cache
from pathlib import Path

import pytest
from docs_blocks import DOCS, resolve

from kubectrl.runtime.log import FIELDS

PAGE = DOCS / "guides" / "go-map.md"

#: The public modules a bare name of the page may come from.
MODULES = (
    "kubectrl",
    "kubectrl.operator",
    "kubectrl.client",
    "kubectrl.client.interfaces",
    "kubectrl.client.options",
    "kubectrl.cache",
    "kubectrl.workqueue",
    "kubectrl.events",
    "kubectrl.leaderelection",
    "kubectrl.runtime",
    "kubectrl.runtime.predicate",
    "kubectrl.runtime.handler",
    "kubectrl.runtime.controllerutil",
    "kubectrl.runtime.source",
    "kubectrl.testing",
    "kubectrl.envtest",
    "kubectrl.errors",
    "kubectrl.conditions",
    "kubectrl.objects",
    "kubectrl.labels",
    "kubectrl.crd",
    "kubectrl.webhook",
    "kubectrl.resources",
    "kubectrl.models",
)

#: A variable the page writes, and the classes whose attributes may follow it.
RECEIVERS = {
    "manager": ("kubectrl.runtime.Manager",),
    "client": ("kubectrl.client.AsyncClient", "kubectrl.runtime.CachedClient"),
    "informer": ("kubectrl.cache.Informer",),
    "controller": ("kubectrl.runtime.Controller",),
    "server": ("kubectrl.webhook.WebhookServer",),
    "Builder(manager)": ("kubectrl.runtime.Builder",),
    "operator": ("kubectrl.operator.Operator",),
}

#: Classes whose methods, attributes and parameters a row names bare (``add_readyz_check``,
#: ``field_validation="Strict"``, ``authorization()``), continuing a row's receiver.
OWNERS = (
    "kubectrl.runtime.Manager",
    "kubectrl.operator.Operator",
    "kubectrl.operator._daemons.Daemons",
    "kubectrl.runtime.ControllerOptions",
    "kubectrl.runtime.ManagerOptions",
    "kubectrl.client.AsyncClient",
    "kubectrl.runtime.CachedClient",
    "kubectrl.client.ClientConfig",
    "kubectrl.client.CredentialSource",
    "kubectrl.cache.Informer",
    "kubectrl.runtime.Builder",
    "kubectrl.client.options.WriteOptions",
    "kubectrl.client.options.PatchOptions",
    "kubectrl.client.options.ListOptions",
)

#: Names of the page that are not kubectrl's: examples' own classes and variables.
#: The fields a record made inside a reconcile carries (the logging row names them).
LOG_RECORD_FIELDS = frozenset(FIELDS)

NOT_KUBECTRL = {
    "Foo",
    "V1Job",
    "V1Deployment",
    "GizmoTemplate",
    "spec",
    "obj",
    "config",
    "source",
    "f",
    "fn",
    "p",
    "c",
    "r",
    "kind",
    "handler",
    "seconds",
    "err",
    "name",
    "ns",
    "sel",
    "cms",
    "conds",
    "jobs",
    "awaitable",
    "pod",
    "cmd",
    "fake",
    "python",
    "nox",
    "load_config()",
    "oldself",
    "self",
    "e",
    "event",
    "o",
    "matching_fields",
    "field_manager",
    "dry_run",
    "namespace",
    "label_selector",
    "clock",
    "encoding",
    "audiences",
    "priority",
}

_SPAN = re.compile(r"`([^`]+)`")
_LEADING = re.compile(
    r"^(?:await\s+|async\s+(?:for|with)\s+\w+\s+in\s+|async\s+with\s+)?([A-Za-z_][\w]*)"
)


def rows(page: Path = PAGE) -> list[tuple[int, str]]:
    """``(line, kubectrl cell)`` of every table row of the page (not headers, not rules)."""
    out: list[tuple[int, str]] = []
    for number, line in enumerate(page.read_text(encoding="utf-8").splitlines(), start=1):
        if not line.startswith("| ") or line.startswith("| Go |") or line.startswith("|---"):
            continue
        # The kubectrl column is the last; a `\|` inside a cell is a literal bar.
        cells = [c.strip() for c in re.split(r"(?<!\\)\|", line.strip().strip("|"))]
        out.append((number, cells[-1]))
    return out


@cache
def exported() -> frozenset[str]:
    names: set[str] = set()
    for module_name in MODULES:
        module = importlib.import_module(module_name)
        names.update(getattr(module, "__all__", ()))
        names.update(n for n in dir(module) if not n.startswith("_"))
    return frozenset(names)


def _members(dotted: str) -> set[str]:
    """Attributes of a class, the instance attributes its ``__init__`` sets, and the
    parameters of its methods."""
    owner = resolve(dotted)
    assert isinstance(owner, type), dotted
    names = {n for n in dir(owner) if not n.startswith("_")}
    for klass in owner.__mro__:
        names.update(getattr(klass, "__annotations__", {}))  # fields, TypedDict keys
        init = klass.__dict__.get("__init__")
        if init is not None and hasattr(init, "__code__"):
            with contextlib.suppress(OSError, TypeError):
                names.update(re.findall(r"self\.(\w+)\s*[:=]", inspect.getsource(init)))
    for name in list(names):
        member = inspect.getattr_static(owner, name, None)
        if callable(member):
            with contextlib.suppress(TypeError, ValueError):
                names.update(inspect.signature(member).parameters)
    return names


@cache
def known_members() -> frozenset[str]:
    return frozenset(name for dotted in OWNERS for name in _members(dotted))


def problems(cell: str) -> list[str]:
    """What in one kubectrl cell names nothing."""
    out: list[str] = []
    for span in _SPAN.findall(cell):
        for dotted in re.findall(r"\bkubectrl(?:\.\w+)+", span):
            try:
                resolve(dotted)
            except (ImportError, AttributeError):
                out.append(f"{dotted}: does not import")
        if span.startswith("kubectrl"):
            continue
        receiver = next((r for r in RECEIVERS if span.startswith(r + ".")), None)
        if receiver is not None:
            # The first attribute only: what follows is its value's.
            attribute = re.match(r"\.(\w+)", span[len(receiver) :])
            owners = RECEIVERS[receiver]
            if attribute and not any(attribute.group(1) in _members(o) for o in owners):
                out.append(f"{span}: {' or '.join(owners)} has no {attribute.group(1)!r}")
            continue
        annotated = re.match(r"^\w+: (\w+)", span)  # `conditions: Conditions`: the type
        if annotated:
            span = annotated.group(1)
        match = _LEADING.match(span)
        if match is None:
            continue
        name = match.group(1)
        if (
            keyword.iskeyword(name)
            or hasattr(builtins, name)
            or name in NOT_KUBECTRL
            or span in NOT_KUBECTRL
            or span in LOG_RECORD_FIELDS  # attributes of a log record, not names to import
            or re.match(r"^V\d", name)  # a kubernetes package model
            or re.match(r"^[a-z]+[A-Z]", name)  # a wire field name (resourceVersion)
            or (name.lower() == name and span[match.end() : match.end() + 1] == ".")
        ):
            continue
        if name not in exported() and name not in known_members():
            out.append(f"{span}: {name!r} is exported by no public kubectrl module")
    return out


def test_the_page_has_rows() -> None:
    assert len(rows()) > 60


@pytest.mark.parametrize(("line", "cell"), rows(), ids=[f"line{n}" for n, _ in rows()])
def test_every_name_of_the_row_exists(line: int, cell: str) -> None:
    assert problems(cell) == [], f"docs/guides/go-map.md:{line}"


def test_the_check_finds_a_name_that_does_not_exist() -> None:
    assert problems("`new_predicate_func(f)`") != []
    assert problems("`kubectrl.runtime.predicate.no_such_thing`") != []
    assert problems("`manager.no_such_method()`") != []
    assert problems("`new_predicate_funcs(f)`, `manager.add(r)`") == []
