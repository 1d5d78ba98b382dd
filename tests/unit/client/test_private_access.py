"""No code of the library reaches into httpx's, httpcore's or h11's private attributes.

The client's transport seam (kubectrl.client._transport) calls httpx transports through their
public ``handle_async_request`` and ``aclose`` only; its own transport is built from the config,
not found inside an ``httpx.AsyncClient`` (``client._transport``), and no connection pool is
searched for spoiled connections (``transport._pool``, ``connection._h11_state``). A private
attribute can change in any release of those packages without notice; this scan of every
module under src/kubectrl keeps them out:

- an attribute named like a private attribute of those packages (their classes' ``_name``
  methods and attributes, read from their source) on anything but ``self``, unless the library
  has an attribute of that name of its own; the names the seam used to reach for
  (``_transport``, ``_pool``, ``_connections``, ``_h11_state``, ``_content``...) on anything
  but ``self``, always;
- ``self._name`` in a subclass of one of their classes when that class (or a base) has
  ``_name`` (``self._content`` in an ``httpx.Response``);
- ``getattr``/``hasattr``/``setattr``/``delattr`` with one of those names as a string;
- a private module of those packages (``httpx._models``), imported or as an attribute.
"""

from __future__ import annotations

import ast
import functools
import importlib
import pathlib
from dataclasses import dataclass

import kubectrl

FOREIGN = ("httpx", "httpcore", "h11")
SRC = pathlib.Path(kubectrl.__file__).parent

#: Reached for on an object of those packages by name in the past: flagged on any receiver but
#: ``self`` (the library's own attributes do not use these names off ``self``).
ALWAYS = frozenset(
    {
        "_transport",
        "_transport_for_url",
        "_mounts",
        "_pool",
        "_connections",
        "_connection",
        "_h11_state",
        "_network_stream",
        "_content",
        "_stream",
    }
)


def _private(name: str) -> bool:
    return name.startswith("_") and not name.startswith("__")


def _defined_privates(tree: ast.AST) -> set[str]:
    """Private names a source defines on its classes: methods and class attributes, and what
    its methods assign to ``self._name``."""
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ClassDef):
            for item in node.body:
                if isinstance(item, (ast.FunctionDef, ast.AsyncFunctionDef)) and _private(
                    item.name
                ):
                    names.add(item.name)
                targets = (
                    item.targets
                    if isinstance(item, ast.Assign)
                    else [item.target]
                    if isinstance(item, ast.AnnAssign)
                    else []
                )
                names.update(t.id for t in targets if isinstance(t, ast.Name) and _private(t.id))
        if (
            isinstance(node, ast.Attribute)
            and isinstance(node.value, ast.Name)
            and node.value.id == "self"
            and isinstance(node.ctx, ast.Store)
            and _private(node.attr)
        ):
            names.add(node.attr)
    return names


@functools.cache
def _foreign_classes() -> dict[tuple[str, str], frozenset[str]]:
    """The private names each class of httpx, httpcore and h11 defines, by (package, name)."""
    classes: dict[tuple[str, str], frozenset[str]] = {}
    for package in FOREIGN:
        root = pathlib.Path(importlib.import_module(package).__file__ or "").parent
        for path in root.rglob("*.py"):
            for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
                if isinstance(node, ast.ClassDef):
                    known = classes.get((package, node.name), frozenset())
                    classes[(package, node.name)] = known | _defined_privates(node)
    return classes


@functools.cache
def foreign_privates() -> frozenset[str]:
    """Every private attribute name the classes of httpx, httpcore and h11 define."""
    return frozenset().union(*_foreign_classes().values())


@functools.cache
def class_privates(cls: type) -> frozenset[str]:
    """The private names ``cls`` and its bases from those packages define."""
    names: set[str] = set()
    for klass in cls.__mro__:
        package = klass.__module__.split(".")[0]
        if package in FOREIGN:
            names.update(name for name in vars(klass) if _private(name))
            names |= _foreign_classes().get((package, klass.__name__), frozenset())
    return frozenset(names)


@dataclass(frozen=True)
class Violation:
    where: str
    line: int
    what: str

    def __str__(self) -> str:
        return f"{self.where}:{self.line}: {self.what}"


class _Scanner(ast.NodeVisitor):
    def __init__(self, where: str, own: frozenset[str]) -> None:
        self.where = where
        self.own = own
        self.modules: dict[str, str] = {}  # local name -> foreign module ("httpx", ...)
        self.classes: dict[str, type] = {}  # local name -> foreign class
        self.bases: list[list[type]] = []  # the foreign bases of each enclosing class
        self.found: list[Violation] = []

    def flag(self, node: ast.AST, what: str) -> None:
        self.found.append(Violation(self.where, getattr(node, "lineno", 0), what))

    # imports: aliases of the foreign packages and of their classes
    def visit_Import(self, node: ast.Import) -> None:
        for alias in node.names:
            parts = alias.name.split(".")
            if parts[0] in FOREIGN:
                if any(_private(part) for part in parts[1:]):
                    self.flag(node, f"imports the private module {alias.name}")
                self.modules[alias.asname or parts[0]] = alias.name if alias.asname else parts[0]

    def visit_ImportFrom(self, node: ast.ImportFrom) -> None:
        parts = (node.module or "").split(".")
        if node.level == 0 and parts[0] in FOREIGN:
            if any(_private(part) for part in parts[1:]):
                self.flag(node, f"imports from the private module {node.module}")
            module = importlib.import_module(node.module or "")
            for alias in node.names:
                if _private(alias.name):
                    self.flag(node, f"imports the private name {node.module}.{alias.name}")
                value = getattr(module, alias.name, None)
                if isinstance(value, type):
                    self.classes[alias.asname or alias.name] = value

    def _foreign_class(self, expr: ast.expr) -> type | None:
        if isinstance(expr, ast.Name):
            return self.classes.get(expr.id)
        if isinstance(expr, ast.Attribute) and isinstance(expr.value, ast.Name):
            module = self.modules.get(expr.value.id)
            if module is not None:
                value = getattr(importlib.import_module(module), expr.attr, None)
                return value if isinstance(value, type) else None
        return None

    def visit_ClassDef(self, node: ast.ClassDef) -> None:
        bases = [cls for cls in map(self._foreign_class, node.bases) if cls is not None]
        self.bases.append(bases)
        self.generic_visit(node)
        self.bases.pop()

    def visit_Attribute(self, node: ast.Attribute) -> None:
        name = node.attr
        receiver = node.value
        if _private(name):
            if isinstance(receiver, ast.Name) and receiver.id in ("self", "cls"):
                for base in self.bases[-1] if self.bases else []:
                    if name in class_privates(base):
                        self.flag(node, f"{receiver.id}.{name} is private to {base.__name__}")
            elif isinstance(receiver, ast.Name) and receiver.id in self.modules:
                self.flag(node, f"{receiver.id}.{name} is a private name of {receiver.id}")
            elif name in ALWAYS or (name in foreign_privates() and name not in self.own):
                self.flag(node, f"<object>.{name}: a private attribute of httpx/httpcore/h11")
        self.generic_visit(node)

    def visit_Call(self, node: ast.Call) -> None:
        if (
            isinstance(node.func, ast.Name)
            and node.func.id in ("getattr", "hasattr", "setattr", "delattr")
            and len(node.args) >= 2
            and isinstance(node.args[1], ast.Constant)
            and isinstance(node.args[1].value, str)
            and node.args[1].value in foreign_privates() | ALWAYS
        ):
            self.flag(node, f"{node.func.id}(..., {node.args[1].value!r})")
        self.generic_visit(node)


@functools.cache
def own_privates() -> frozenset[str]:
    names: set[str] = set()
    for path in SRC.rglob("*.py"):
        names |= _defined_privates(ast.parse(path.read_text(encoding="utf-8")))
    return frozenset(names - ALWAYS)


def scan(source: str, where: str = "<source>") -> list[Violation]:
    scanner = _Scanner(where, own_privates())
    scanner.visit(ast.parse(source))
    return scanner.found


def test_the_library_reaches_into_no_private_attribute_of_httpx_httpcore_or_h11() -> None:
    found: list[Violation] = []
    for path in sorted(SRC.rglob("*.py")):
        found += scan(path.read_text(encoding="utf-8"), str(path.relative_to(SRC.parent)))
    assert not found, "\n".join(map(str, found))


def test_the_scan_finds_what_the_client_did_before() -> None:
    """The accesses the request path made before it had a seam of its own, each found."""
    before = """
import httpx
from httpx._models import Response as _R

class Answer(httpx.Response):
    def __init__(self, body):
        super().__init__(200)
        self._content = body

def of(http):
    return getattr(http, "_transport", None)

async def drop(transport):
    pool = transport._pool
    for connection in list(pool.connections):
        state = connection._connection._h11_state
        if hasattr(connection, "_network_stream"):
            await connection.aclose()

def done(response):
    return response.is_stream_consumed and hasattr(response, "_content")
"""
    found = {violation.what for violation in scan(before)}
    assert found == {
        "imports from the private module httpx._models",
        "self._content is private to Response",
        "getattr(..., '_transport')",
        "<object>._pool: a private attribute of httpx/httpcore/h11",
        "<object>._connection: a private attribute of httpx/httpcore/h11",
        "<object>._h11_state: a private attribute of httpx/httpcore/h11",
        "hasattr(..., '_network_stream')",
        "hasattr(..., '_content')",
    }


def test_the_libraries_own_private_attributes_pass() -> None:
    """``self._name`` on a class of the library's own, and a name only the library defines on
    another of its objects, are not reported."""
    ours = """
import httpx

class Pool:
    def __init__(self):
        self._idle = {}
        self._transport = None

    def take(self, other):
        return other._idle

class Body(httpx.AsyncByteStream):
    def __init__(self, pool):
        self._pool = pool
"""
    assert scan(ours) == []
