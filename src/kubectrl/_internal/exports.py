"""How packages export: public module paths, lazy attributes and deprecated names.

- :func:`publish`: a class defined in ``kubectrl.cache._informer`` and re-exported by
  ``kubectrl.cache`` shows as ``kubectrl.cache.Informer`` in reprs, tracebacks and docs, so users
  never see (or import) the private module (as httpx and trio do).
- :func:`module_getattr`: a package's PEP 562 ``__getattr__`` and ``__dir__``, which import a
  name's module on first use (so ``import kubectrl.client`` does not load the controller runtime)
  and keep a renamed name working with a :class:`DeprecationWarning` naming its replacement.
"""

from __future__ import annotations

import contextlib
import importlib
import sys
import warnings
from collections.abc import Callable, Iterable, Mapping, MutableMapping
from dataclasses import dataclass
from typing import Any

__all__ = ["Deprecated", "module_getattr", "publish"]


def publish(
    package: str,
    namespace: MutableMapping[str, Any],
    names: Iterable[str],
    *,
    private_of: str | None = None,
) -> None:
    """Set ``__module__`` to ``package`` on each exported object defined in its private modules
    (those of ``private_of`` for a public submodule: ``kubectrl.runtime.predicate`` publishes
    what ``kubectrl.runtime._predicate`` defines) or in ``kubectrl._internal``."""
    private_prefixes = (f"{private_of or package}._", "kubectrl._internal.")
    for name in names:
        obj = namespace[name]
        if getattr(obj, "__module__", "").startswith(private_prefixes):
            with contextlib.suppress(AttributeError, TypeError):
                obj.__module__ = package


@dataclass(frozen=True)
class Deprecated:
    """A name kept for compatibility: ``attr`` of ``module``, to be spelled ``replacement`` now."""

    module: str
    attr: str
    replacement: str


def module_getattr(
    package: str,
    namespace: MutableMapping[str, Any],
    *,
    lazy: Mapping[str, str] | None = None,
    deprecated: Mapping[str, Deprecated] | None = None,
) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    """A package's ``__getattr__`` and ``__dir__`` (PEP 562).

    ``lazy`` maps a public name to the module that defines it; the module is imported on first
    access and the value cached in ``namespace`` (the package's globals). A name that maps to
    ``""`` is a subpackage (``kubectrl.runtime`` reached as an attribute of ``kubectrl``).
    ``deprecated`` names still resolve, each access warning with :class:`DeprecationWarning`
    naming the replacement; they are not listed by ``dir()``.
    """
    lazy = dict(lazy or {})
    deprecated = dict(deprecated or {})

    def getattr_(name: str) -> Any:
        module = lazy.get(name)
        if module is not None:
            if module:
                value = getattr(importlib.import_module(module), name)
            else:
                value = importlib.import_module(f"{package}.{name}")
            namespace[name] = value
            return value
        old = deprecated.get(name)
        if old is not None:
            # ``from package import name`` looks the name up twice: once in importlib's
            # _handle_fromlist (hasattr), then for the import itself; warn once, for the latter.
            if sys._getframe(1).f_code.co_name != "_handle_fromlist":
                warnings.warn(
                    f"{package}.{name} is deprecated; use {old.replacement} instead",
                    DeprecationWarning,
                    stacklevel=2,
                )
            return getattr(importlib.import_module(old.module), old.attr)
        raise AttributeError(f"module {package!r} has no attribute {name!r}")

    def dir_() -> list[str]:
        return sorted(set(namespace) | set(lazy))

    return getattr_, dir_
