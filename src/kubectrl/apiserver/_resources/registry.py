"""The resources the core serves: built-ins at start, custom resources as their CRDs come and go."""

from __future__ import annotations

from collections.abc import Iterable

from kubectrl.apiserver._resources.info import ResourceInfo
from kubectrl.apiserver._status import qualified

__all__ = ["Registry"]


class Registry:
    """Served resources by ``(group, plural)``, in the order they were registered."""

    def __init__(self, infos: Iterable[ResourceInfo] = ()) -> None:
        self._infos: dict[tuple[str, str], ResourceInfo] = {}
        for info in infos:
            self.register(info)

    def __repr__(self) -> str:
        return f"Registry(resources={len(self._infos)})"

    def register(self, info: ResourceInfo) -> None:
        """Serve ``info`` (replacing what was served under its key)."""
        self._infos[info.key] = info

    def unregister(self, key: tuple[str, str]) -> None:
        """Stop serving the resource ``key`` (nothing if it is not served)."""
        self._infos.pop(key, None)

    def get(self, key: tuple[str, str]) -> ResourceInfo | None:
        """The resource served under ``(group, plural)``, or ``None``."""
        return self._infos.get(key)

    def infos(self) -> list[ResourceInfo]:
        """Every served resource, in registration order."""
        return list(self._infos.values())

    def by_kind(self, group: str, version: str, kind: str) -> ResourceInfo | None:
        """The resource serving a kind at a version, or ``None``."""
        for info in self._infos.values():
            if info.group == group and info.kind == kind and version in info.versions:
                return info
        return None

    @staticmethod
    def matches_target(info: ResourceInfo, target: str) -> bool:
        """Whether ``target`` (``*``, a kind, a plural or ``plural.group``) names ``info``."""
        return target in ("*", info.kind, info.plural, qualified(info.plural, info.group))

    def find_target(self, target: str) -> ResourceInfo | None:
        """The first resource ``target`` names, or ``None``."""
        for info in self._infos.values():
            if self.matches_target(info, target):
                return info
        return None
