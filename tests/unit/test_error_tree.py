"""One error tree: every exception class kubectrl exports is a KubectrlError or a documented
outlier, and the kubectrl.errors docstring draws each one under its real base class.

A new error that is not a KubectrlError, or that the docstring does not draw, fails here.
"""

from __future__ import annotations

import builtins
import importlib
import pkgutil
import re
from types import ModuleType

import pytest

import kubectrl
import kubectrl.errors
from kubectrl.errors import KubectrlError

# Exported exception classes that are deliberately not KubectrlErrors, and why. Each is drawn in
# the kubectrl.errors docstring under "Deliberately outside the tree".
OUTLIERS = {
    "QueueShutDown": "a stop signal for workers, as asyncio.QueueShutDown; not a failure",
    "TerminalError": "raised by a reconciler to tell the controller not to requeue",
    "Denied": "raised by an admission validator to refuse an object",
    "PermanentError": "raised by an operator handler to say: failed for good on this change",
    "HandlerTimeoutError": "an operator handler's recorded failure: its timeout passed",
    "HandlerRetriesError": "an operator handler's recorded failure: its retries were used up",
    "TemporaryError": "raised by an operator handler to say: retry after a delay",
    "AdmissionError": "raised by an extension server's admission rule to refuse a write",
    "StatusError": "the in-process API core's refusal, for the transport around it to answer",
    "FeatureNotImplementedError": "what the in-process API core does not implement, named",
}

# Private modules whose errors users still meet: `python -m kubectrl create` reports ScaffoldError.
USER_FACING_PRIVATE_MODULES = ["kubectrl._scaffold"]


def public_modules() -> list[ModuleType]:
    names = ["kubectrl"]
    for info in pkgutil.walk_packages(kubectrl.__path__, "kubectrl."):
        if not any(part.startswith("_") for part in info.name.split(".")[1:]):
            names.append(info.name)
    return [importlib.import_module(name) for name in names + USER_FACING_PRIVATE_MODULES]


def exported_exceptions() -> dict[str, list[tuple[str, type[BaseException]]]]:
    """Class name -> [(module, class)] for every exception class in a public ``__all__``."""
    found: dict[str, list[tuple[str, type[BaseException]]]] = {}
    for module in public_modules():
        for name in getattr(module, "__all__", ()):
            obj = getattr(module, name)
            if isinstance(obj, type) and issubclass(obj, BaseException):
                found.setdefault(obj.__name__, []).append((module.__name__, obj))
    return found


EXPORTED = exported_exceptions()
_TREE_LINE = re.compile(r"^(?P<indent>(?:[│ ] {3})*)[├└]── (?P<name>\w+)")


def drawn_tree() -> dict[str, str]:
    """Class name -> drawn parent name, from the trees in the kubectrl.errors docstring."""
    parents: dict[str, str] = {}
    doc = kubectrl.errors.__doc__ or ""
    stack: list[str] = []
    for line in doc.splitlines():
        stripped = line.strip()
        if stripped in ("KubectrlError", "Exception"):
            stack = [stripped]
            continue
        match = _TREE_LINE.match(line[4:]) if line.startswith("    ") else None
        if match is None:
            continue
        depth = len(match["indent"]) // 4 + 1
        del stack[depth:]
        assert match["name"] not in parents, f"{match['name']} is drawn twice"
        parents[match["name"]] = stack[depth - 1]
        stack.append(match["name"])
    return parents


def test_there_are_exports_to_check() -> None:
    # The walk found the errors it should (a broken walk would make every test below vacuous).
    assert {"NotFoundError", "CacheSyncError", "QueueShutDown", "ManagerError"} <= set(EXPORTED)


@pytest.mark.parametrize("name", sorted(EXPORTED))
def test_every_exported_exception_is_one_class_in_the_tree_or_a_documented_outlier(
    name: str,
) -> None:
    classes = {cls for _, cls in EXPORTED[name]}
    modules = [module for module, _ in EXPORTED[name]]
    assert len(classes) == 1, f"{name}: different classes of one name exported by {modules}"
    (cls,) = classes
    if name in OUTLIERS:
        assert not issubclass(cls, KubectrlError), f"{name} is a KubectrlError: not an outlier"
    else:
        assert issubclass(cls, KubectrlError), (
            f"{name} (exported by {', '.join(modules)}) is not a KubectrlError: derive it from "
            "KubectrlError, or document it as deliberately outside the tree"
        )


def test_the_errors_docstring_draws_every_exported_exception_under_its_real_base() -> None:
    tree = drawn_tree()
    # Python's own exceptions may be drawn as the base of an outlier (NotImplementedError).
    parents = {name: parent for name, parent in tree.items() if not hasattr(builtins, name)}
    assert set(parents) == set(EXPORTED) - {"KubectrlError"}, (
        "kubectrl.errors docstring: drawn but not exported: "
        f"{sorted(set(parents) - set(EXPORTED))}; exported but not drawn: "
        f"{sorted(set(EXPORTED) - set(parents) - {'KubectrlError'})}"
    )
    for name, parent in parents.items():
        ((_, cls), *_) = EXPORTED[name]
        bases = [base.__name__ for base in cls.__bases__]
        assert parent in bases, f"{name} is drawn under {parent}, but its bases are {bases}"
        root = parent
        while root in tree:
            root = tree[root]
        expected_root = "Exception" if name in OUTLIERS else "KubectrlError"
        assert root == expected_root, f"{name} is drawn in the {root} tree, not {expected_root}"


def test_the_tree_reader_sees_nesting() -> None:
    # The checks above rely on the reader getting parents right at every depth.
    parents = drawn_tree()
    assert parents["ExpiredError"] == "GoneError"
    assert parents["GoneError"] == "APIError"
    assert parents["BinaryNotFoundError"] == "ControlPlaneError"
    assert parents["ScaffoldError"] == "KubectrlError"
    assert parents["QueueShutDown"] == "Exception"
