"""Which Kubernetes release each of kubectrl's built-in tables follows, against a server's.

FakeAPI imitates one Kubernetes release, chosen with ``FakeAPI(version=...)``: its tables
(kinds, strategies, defaults, validation) and the built-in OpenAPI schemas it decodes built-in
kinds with (``kubectrl.crd`` uses the default release's) follow it; the ``kubernetes`` package's
models follow the release they were generated from. A test comparing FakeAPI with a real
apiserver of another release compares two APIs, not an implementation with its reference:
:func:`version_skew` says so, one line per component that does not match.
"""

from __future__ import annotations

import dataclasses
import importlib.metadata
import re

from kubectrl import _builtin_schemas
from kubectrl.apiserver import KUBERNETES_VERSIONS

__all__ = ["VersionSkew", "version_skew"]


def _minor(version: str) -> tuple[int, int] | None:
    match = re.match(r"v?(\d+)\.(\d+)", version)
    return (int(match.group(1)), int(match.group(2))) if match else None


@dataclasses.dataclass(frozen=True)
class VersionSkew:
    """The Kubernetes release of the server and of each of kubectrl's built-in tables.

    ``models`` is the release the installed ``kubernetes`` package's models follow (package
    ``37.x`` -> ``"v1.37"``), or ``""`` when it is not installed.
    """

    server: str
    fake_api: str
    schemas: str
    models: str

    def problems(self, *, models: bool = True) -> list[str]:
        """One line per component that does not fit the server; empty when all fit.

        FakeAPI's tables and the schemas must be the server's minor. The models may be one minor
        apart, as a client may be under Kubernetes' version skew policy
        (https://kubernetes.io/releases/version-skew-policy/, kubectl: "within one minor
        version"); two or more minors apart is a problem, unless ``models=False`` (a comparison
        of FakeAPI with the server, which the models take no part in).
        """
        server = _minor(self.server)
        if server is None:
            return [f"the server's version {self.server!r} is not of the form v1.36.3"]
        out = []
        for what, version in (("FakeAPI's tables", self.fake_api), ("the schemas", self.schemas)):
            if _minor(version) != server:
                out.append(
                    f"{what} are {version or 'of no version'}, the apiserver is {self.server}"
                )
        models_minor = _minor(self.models) if models else None
        if models_minor is not None and abs(models_minor[1] - server[1]) > 1:
            out.append(
                f"the kubernetes package's models are {self.models}, more than one minor from "
                f"the apiserver's {self.server}"
            )
        return out


def version_skew(server_version: str, version: str | None = None) -> VersionSkew:
    """Compare ``server_version`` (an apiserver's ``/version`` ``gitVersion``) with the tables
    of the release ``version`` (what ``FakeAPI(version=...)`` takes; default: the default one).

    Example::

        >>> version_skew("v1.36.3", "1.36").problems()
        []
        >>> version_skew("v1.37.2", "1.36").problems()[0]
        "FakeAPI's tables are v1.36.3, the apiserver is v1.37.2"
    """
    minor = _minor(version) if version is not None else None
    key = f"{minor[0]}.{minor[1]}" if minor is not None else _builtin_schemas.DEFAULT_VERSION
    if key not in KUBERNETES_VERSIONS:
        raise ValueError(
            f"Kubernetes {version} is not supported by FakeAPI's tables; choose one of "
            f"{', '.join(KUBERNETES_VERSIONS)}"
        )
    try:
        package = importlib.metadata.version("kubernetes")
    except importlib.metadata.PackageNotFoundError:
        models = ""
    else:
        models = f"v1.{package.split('.')[0]}"
    return VersionSkew(
        server=server_version,
        fake_api=KUBERNETES_VERSIONS[key],
        schemas=_builtin_schemas.server_version(key),
        models=models,
    )
