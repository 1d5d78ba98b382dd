"""The Kubernetes release the API core imitates, chosen per core.

The core's tables follow one Kubernetes release each: its ``/version`` answer, the built-in
OpenAPI definitions it decodes built-in kinds with (``_builtin_schemas-v1.<minor>.json.gz``)
and the few strategy and validation behaviours that changed between the supported releases.
:class:`~kubectrl.apiserver.inprocess.APICore` takes the minor (``"1.37"``) and serves each
request inside :func:`serving`, so that code deep in a strategy asks :func:`current` (or
:func:`at_least`) instead of every hook growing a parameter.

A behaviour that differs between releases is written ``if at_least("1.37"): ... else: ...``,
with a comment citing the upstream change (file and commit or PR in kubernetes/kubernetes).
"""

from __future__ import annotations

import contextlib
import contextvars
import re
from collections.abc import Iterator

__all__ = [
    "DEFAULT",
    "RELEASES",
    "SUPPORTED",
    "UnsupportedVersionError",
    "at_least",
    "current",
    "normalize",
    "release",
    "serving",
]

#: The supported minors, oldest first (``kubectrl.envtest.SUPPORTED_VERSIONS``; a unit test
#: keeps the two equal).
SUPPORTED = ("1.35", "1.36", "1.37")
#: The minor a core imitates when none is chosen (``kubectrl.envtest.DEFAULT_VERSION``).
DEFAULT = "1.37"
#: The patch release of each minor the tables were generated from (the envtest binaries' pins).
RELEASES = {"1.35": "v1.35.4", "1.36": "v1.36.3", "1.37": "v1.37.2"}

_CURRENT: contextvars.ContextVar[str] = contextvars.ContextVar(
    "kubectrl_apiserver_version", default=DEFAULT
)


class UnsupportedVersionError(ValueError):
    """A Kubernetes version the core has no tables for; the message names the supported ones."""


def _key(minor: str) -> tuple[int, int]:
    major, _, rest = minor.partition(".")
    return int(major), int(rest)


def normalize(version: str | None) -> str:
    """The supported minor (``"1.37"``) that ``version`` names; ``None`` is :data:`DEFAULT`.

    ``"1.37"``, ``"1.37.x"``, ``"v1.37.2"`` and ``"v1.37.2-fake"`` all name 1.37. Another minor,
    or a patch release other than the tables' (:data:`RELEASES`), is refused.

    Example::

        >>> normalize("v1.36.3")
        '1.36'
        >>> normalize("1.34")
        Traceback (most recent call last):
        ...
        kubectrl.apiserver._resources.versions.UnsupportedVersionError: Kubernetes 1.34 is not \
supported by the API core's tables; choose one of 1.35, 1.36, 1.37
    """
    if version is None:
        return DEFAULT
    match = re.fullmatch(r"v?(\d+)\.(\d+)(?:\.(x|\*|\d+))?(?:-.*)?", version.strip())
    if match is None:
        raise UnsupportedVersionError(
            f"Kubernetes version {version!r} is not of the form 1.37, 1.37.x or v1.37.2"
        )
    minor = f"{match.group(1)}.{match.group(2)}"
    if minor not in SUPPORTED:
        raise UnsupportedVersionError(
            f"Kubernetes {version} is not supported by the API core's tables; choose one of "
            f"{', '.join(SUPPORTED)}"
        )
    patch = match.group(3)
    if patch is not None and patch.isdigit() and f"v{minor}.{patch}" != RELEASES[minor]:
        raise UnsupportedVersionError(
            f"Kubernetes {version}: the API core's tables of {minor} are {RELEASES[minor]}'s; "
            f"ask for {minor} or {RELEASES[minor]}"
        )
    return minor


def release(minor: str) -> str:
    """The patch release (``"v1.37.2"``) the tables of a supported minor follow."""
    return RELEASES[normalize(minor)]


def current() -> str:
    """The minor of the core serving the request in progress (:data:`DEFAULT` outside one)."""
    return _CURRENT.get()


def at_least(minor: str) -> bool:
    """Whether the release being imitated is ``minor`` or newer.

    Example::

        >>> with serving("1.36"):
        ...     at_least("1.37"), at_least("1.36")
        (False, True)
    """
    return _key(current()) >= _key(minor)


@contextlib.contextmanager
def serving(minor: str) -> Iterator[None]:
    """Run the block as the core of Kubernetes ``minor`` (a supported minor)."""
    token = _CURRENT.set(normalize(minor))
    try:
        yield
    finally:
        _CURRENT.reset(token)
