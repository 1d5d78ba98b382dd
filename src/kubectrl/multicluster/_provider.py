"""Providers: what discovers the clusters a multicluster manager engages.

multicluster-runtime's ``multicluster.Provider`` and ``ProviderRunnable``
(``pkg/multicluster/multicluster.go``): a provider runs for as long as the manager does and
tells it, through an :class:`Aware` (the manager), when a cluster appears (:meth:`Aware.engage`)
and disappears (:meth:`Aware.disengage`). Here a provider is anything with
``async run(aware)``; the ready-made ones share one loop (:class:`DesiredStateProvider`): work out
the clusters that should be engaged now (name, a fingerprint of their kubeconfig, how to load
it), engage the new and the changed, disengage the gone, wait for a change, repeat.

A kubeconfig that does not load is never dropped silently: its error is logged once per
fingerprint and kept in :attr:`DesiredStateProvider.errors` (by cluster), and a cluster already
engaged with an earlier good kubeconfig stays engaged with it (a half-written file or Secret
does not take a cluster away).
"""

from __future__ import annotations

import abc
import asyncio
import dataclasses
import functools
import hashlib
import logging
import os
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Protocol, runtime_checkable

from kubectrl._internal.clock import Clock, RealClock
from kubectrl.client import ClientConfig, load_kubeconfig
from kubectrl.errors import ConfigError
from kubectrl.multicluster._kubeconfig import KubeconfigPolicy, load_untrusted_kubeconfig

__all__ = [
    "Aware",
    "DesiredCluster",
    "DesiredStateProvider",
    "DirectoryProvider",
    "KubeconfigProvider",
    "Provider",
    "StaticProvider",
]

log = logging.getLogger("kubectrl.multicluster.provider")


@runtime_checkable
class Aware(Protocol):
    """What a provider engages clusters with (the :class:`MultiClusterManager`).

    ``engage(name, config)`` starts (or, for a name already engaged, restarts with the new
    config) everything the manager runs per cluster; ``disengage(name)`` stops it (a name not
    engaged is a no-op). Both return once the change is made, not once caches synced.
    """

    async def engage(self, name: str, config: ClientConfig) -> None:
        """Engage cluster ``name`` reached through ``config``."""
        ...

    async def disengage(self, name: str) -> None:
        """Disengage cluster ``name``."""
        ...


@runtime_checkable
class Provider(Protocol):
    """Discovers clusters: ``run(aware)`` engages and disengages them until cancelled."""

    async def run(self, aware: Aware) -> None:
        """Run until cancelled; raise only when the provider cannot go on at all."""
        ...


@dataclasses.dataclass(frozen=True)
class DesiredCluster:
    """One cluster a provider wants engaged: ``fingerprint`` changes when its kubeconfig does
    (a change re-engages it); ``load`` builds its config (may raise
    :class:`~kubectrl.errors.ConfigError`)."""

    fingerprint: str
    load: Callable[[], ClientConfig]


def _same(config: ClientConfig) -> ClientConfig:
    return config


def fingerprint(data: bytes) -> str:
    """A short digest of kubeconfig bytes (change detection, never security)."""
    return hashlib.sha256(data).hexdigest()[:16]


class DesiredStateProvider(abc.ABC):
    """A provider written as "which clusters now?" plus "wait for a change".

    Subclasses implement :meth:`desired` and :meth:`wait_for_change`; :meth:`run` does the
    engaging, disengaging and error reporting.
    """

    def __init__(self) -> None:
        self._errors: dict[str, str] = {}
        self._engaged: dict[str, str] = {}
        self._failed: dict[str, str] = {}
        self._synced = False
        self._last_error = ""

    @property
    def errors(self) -> dict[str, str]:
        """The clusters whose current kubeconfig did not load, with the error."""
        return dict(self._errors)

    @property
    def last_error(self) -> str:
        """Why the last pass could not list the clusters at all (``""`` when it could)."""
        return self._last_error

    @property
    def engaged(self) -> frozenset[str]:
        """The clusters this provider engaged and has not disengaged."""
        return frozenset(self._engaged)

    @abc.abstractmethod
    async def desired(self) -> Mapping[str, DesiredCluster]:
        """The clusters that should be engaged now."""

    @abc.abstractmethod
    async def wait_for_change(self) -> None:
        """Return when :meth:`desired` may have changed."""

    async def run(self, aware: Aware) -> None:
        """Engage and disengage until cancelled (see the class)."""
        while True:
            await self.sync_once(aware)
            await self.wait_for_change()

    async def sync_once(self, aware: Aware) -> None:
        """One pass: make the engaged clusters match :meth:`desired`.

        When :meth:`desired` raises :class:`~kubectrl.errors.ConfigError` (an unreadable
        kubeconfig file or directory) on the first pass, the error propagates (the manager
        stops with it); on a later pass it is logged, kept in :attr:`last_error`, and the
        engaged clusters stay as they are (a file being rewritten does not empty the fleet).
        """
        try:
            want = dict(await self.desired())
        except ConfigError as err:
            if not self._synced:
                raise
            if str(err) != self._last_error:
                log.error("%r: cannot list the clusters, keeping them as they are: %s", self, err)
            self._last_error = str(err)
            return
        self._synced = True
        self._last_error = ""
        for name in sorted(set(self._engaged) - set(want)):
            log.info("cluster %s is gone: disengaging", name, extra={"cluster": name})
            await aware.disengage(name)
            del self._engaged[name]
        for name in sorted(set(self._errors) - set(want)):
            del self._errors[name]
            self._failed.pop(name, None)
        for name, item in sorted(want.items()):
            if self._engaged.get(name) == item.fingerprint:
                continue
            if self._failed.get(name) == item.fingerprint:
                continue  # reported already; wait for a new version
            try:
                config = item.load()
            except ConfigError as err:
                self._failed[name] = item.fingerprint
                self._errors[name] = str(err)
                kept = " (keeping the one engaged before)" if name in self._engaged else ""
                log.error(
                    "cluster %s: kubeconfig rejected%s: %s",
                    name,
                    kept,
                    err,
                    extra={"cluster": name},
                )
                continue
            self._failed.pop(name, None)
            self._errors.pop(name, None)
            await aware.engage(name, config)
            self._engaged[name] = item.fingerprint


class StaticProvider(DesiredStateProvider):
    """Clusters given by the program: a mapping at first, then :meth:`add` and :meth:`remove`
    while the manager runs (for tests over several :class:`~kubectrl.testing.FakeAPI`, or a
    fleet known at start).

    Example::

        provider = StaticProvider({"east": east_api.config(), "west": west_api.config()})
        provider.add("north", north_api.config())   # engaged on the next pass
        provider.remove("east")                     # disengaged
    """

    def __init__(self, clusters: Mapping[str, ClientConfig] | None = None) -> None:
        super().__init__()
        self._configs: dict[str, ClientConfig] = {}
        self._versions: dict[str, int] = {}
        self._counter = 0
        self._changed = asyncio.Event()
        for name, config in (clusters or {}).items():
            self.add(name, config)

    def add(self, name: str, config: ClientConfig) -> None:
        """Engage ``name`` (or re-engage it with ``config`` if it is engaged)."""
        if not name:
            raise ValueError("StaticProvider.add: a cluster needs a non-empty name")
        if not isinstance(config, ClientConfig):
            raise TypeError(
                f"StaticProvider.add({name!r}): config must be a ClientConfig, "
                f"not {type(config).__name__}"
            )
        self._counter += 1
        self._configs[name] = config
        self._versions[name] = self._counter
        self._changed.set()

    def remove(self, name: str) -> None:
        """Disengage ``name``; ``KeyError`` naming it if it was never added."""
        if name not in self._configs:
            raise KeyError(f"StaticProvider.remove: no cluster named {name!r}")
        del self._configs[name]
        del self._versions[name]
        self._changed.set()

    async def desired(self) -> Mapping[str, DesiredCluster]:
        self._changed.clear()
        return {
            name: DesiredCluster(str(self._versions[name]), functools.partial(_same, config))
            for name, config in self._configs.items()
        }

    async def wait_for_change(self) -> None:
        await self._changed.wait()


class _PollingProvider(DesiredStateProvider):
    def __init__(self, poll_interval: float, clock: Clock | None) -> None:
        super().__init__()
        if poll_interval <= 0:
            raise ValueError(f"poll_interval must be > 0, not {poll_interval!r}")
        self.poll_interval = poll_interval
        self._clock: Clock = clock if clock is not None else RealClock()

    async def wait_for_change(self) -> None:
        await self._clock.sleep(self.poll_interval)


class KubeconfigProvider(_PollingProvider):
    """Every context of one kubeconfig file is a cluster, named after the context.

    ``contexts`` limits it to those names (a context missing from the file is an error in
    :attr:`errors`). The file is read again every ``poll_interval`` seconds; any change to it
    re-engages every context (their fingerprint is the file's). It is a file you chose, so it
    is trusted: ``exec`` plugins and file references work as with
    :func:`~kubectrl.client.load_kubeconfig`.

    Example::

        provider = KubeconfigProvider("~/.kube/fleet.yaml", contexts=["kind-east", "kind-west"])
    """

    def __init__(
        self,
        path: str | os.PathLike[str],
        *,
        contexts: list[str] | None = None,
        poll_interval: float = 10.0,
        clock: Clock | None = None,
    ) -> None:
        super().__init__(poll_interval, clock)
        self.path = Path(os.path.expanduser(os.fspath(path)))
        self.contexts = list(contexts) if contexts is not None else None

    async def desired(self) -> Mapping[str, DesiredCluster]:
        import yaml

        try:
            raw = self.path.read_bytes()
        except OSError as err:
            raise ConfigError(
                f"cannot read kubeconfig: {err.strerror}", path=str(self.path)
            ) from None
        try:
            parsed = yaml.safe_load(raw) or {}
        except yaml.YAMLError:
            raise ConfigError("malformed YAML", path=str(self.path)) from None
        names: list[str] = []
        for context in (parsed.get("contexts") or []) if isinstance(parsed, dict) else []:
            if isinstance(context, dict) and isinstance(context.get("name"), str):
                names.append(context["name"])
        wanted = self.contexts if self.contexts is not None else names
        digest = fingerprint(raw)
        path = self.path
        return {
            name: DesiredCluster(digest, functools.partial(load_kubeconfig, path, context=name))
            for name in wanted
        }


class DirectoryProvider(_PollingProvider):
    """Every kubeconfig file in a directory is a cluster, named after the file (without the
    suffix), loaded with its ``current-context``; the directory is scanned every
    ``poll_interval`` seconds: a new file engages, a changed file re-engages, a removed file
    disengages (a mounted Secret or ConfigMap directory works: its ``..data`` links are
    skipped with every other dot-file).

    The files are treated as untrusted (:func:`load_untrusted_kubeconfig`): no ``exec``
    plugins, no file references, at most ``policy.max_bytes`` each, unless ``policy`` allows.

    Example::

        provider = DirectoryProvider("/etc/fleet", suffix=".kubeconfig")
    """

    def __init__(
        self,
        directory: str | os.PathLike[str],
        *,
        suffix: str = "",
        poll_interval: float = 5.0,
        policy: KubeconfigPolicy | None = None,
        clock: Clock | None = None,
    ) -> None:
        super().__init__(poll_interval, clock)
        self.directory = Path(os.path.expanduser(os.fspath(directory)))
        self.suffix = suffix
        self.policy = policy if policy is not None else KubeconfigPolicy()

    async def desired(self) -> Mapping[str, DesiredCluster]:
        out: dict[str, DesiredCluster] = {}
        try:
            entries = sorted(self.directory.iterdir())
        except OSError as err:
            raise ConfigError(
                f"cannot list the kubeconfig directory: {err.strerror}", path=str(self.directory)
            ) from None
        for entry in entries:
            if entry.name.startswith(".") or not entry.name.endswith(self.suffix):
                continue
            if not entry.is_file():
                continue
            name = entry.name[: len(entry.name) - len(self.suffix)] if self.suffix else entry.name
            try:
                size = entry.stat().st_size
                if size > self.policy.max_bytes:
                    raw = b""  # reported by the loader below, without reading it
                    digest = f"size-{size}"
                else:
                    raw = entry.read_bytes()
                    digest = fingerprint(raw)
            except OSError:
                continue  # removed between listing and reading: gone on this pass
            out[name] = DesiredCluster(digest, self._loader(entry, raw, size))
        return out

    def _loader(self, entry: Path, raw: bytes, size: int) -> Callable[[], ClientConfig]:
        def load() -> ClientConfig:
            if size > self.policy.max_bytes:
                raise ConfigError(
                    f"kubeconfig is {size} bytes, over the limit of {self.policy.max_bytes}",
                    path=str(entry),
                )
            return load_untrusted_kubeconfig(raw, source=str(entry), policy=self.policy)

        return load
