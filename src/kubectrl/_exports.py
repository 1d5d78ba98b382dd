"""Make re-exported objects report their public module path (as httpx and trio do).

A class defined in ``kubectrl.cache._informer`` and re-exported by ``kubectrl.cache`` should show
as ``kubectrl.cache.Informer`` in reprs, tracebacks and docs, so users never see (or import) the
private module.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterable, MutableMapping
from typing import Any

__all__ = ["publish"]


def publish(package: str, namespace: MutableMapping[str, Any], names: Iterable[str]) -> None:
    """Set ``__module__`` to ``package`` on each exported object defined in its private modules."""
    private_prefix = f"{package}._"
    for name in names:
        obj = namespace[name]
        if getattr(obj, "__module__", "").startswith(private_prefix):
            with contextlib.suppress(AttributeError, TypeError):
                obj.__module__ = package
