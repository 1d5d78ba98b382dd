"""Several control planes in one test run: started side by side, stopped together.

A multicluster controller is tested against several clusters at once (``docs/multicluster.md``).
Each :class:`~kubectrl.envtest.ControlPlane` is its own etcd and kube-apiserver on free ports
of 127.0.0.1; :func:`start_control_planes` starts them in parallel threads (a cold start is
mostly waiting for the processes), so three take about as long as one.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterable, Iterator
from concurrent.futures import ThreadPoolExecutor
from typing import Any, Protocol, TypeVar

from kubectrl.envtest._control_plane import ControlPlane
from kubectrl.envtest._errors import ControlPlaneError

__all__ = ["start_control_planes"]


class _Startable(Protocol):
    def start(self) -> Any: ...

    def stop(self) -> None: ...


_P = TypeVar("_P", bound=_Startable)


def start_all(planes: dict[str, _P]) -> dict[str, _P]:
    """Start every plane at once; if any fails, stop them all and raise naming each failure."""
    if not planes:
        return planes
    with ThreadPoolExecutor(len(planes), thread_name_prefix="envtest-start") as pool:
        futures = {name: pool.submit(plane.start) for name, plane in planes.items()}
    failed = {name: f.exception() for name, f in futures.items() if f.exception() is not None}
    if failed:
        for plane in planes.values():
            with contextlib.suppress(Exception):
                plane.stop()
        detail = "; ".join(f"{name}: {error}" for name, error in failed.items())
        raise ControlPlaneError(f"{len(failed)} of {len(planes)} control planes failed: {detail}")
    return planes


def stop_all(planes: Iterable[_Startable]) -> None:
    """Stop every plane, each even if another's stop fails (the first error is raised)."""
    errors: list[BaseException] = []
    for plane in planes:
        try:
            plane.stop()
        except Exception as exc:
            errors.append(exc)
    if errors:
        raise errors[0]


@contextlib.contextmanager
def start_control_planes(*names: str, **options: Any) -> Iterator[dict[str, ControlPlane]]:
    """Start one :class:`ControlPlane` per name, side by side; stop them all on exit.

    ``options`` go to each ``ControlPlane`` (``version=``, ``start_timeout=``, ...). If one
    fails to start, the others are stopped and :class:`ControlPlaneError` names each failure.
    Stopping one mid-test (``planes["west"].stop()``) or restarting its apiserver
    (``restart_apiserver()``) leaves the others running.

    Example::

        with start_control_planes("east", "west", start_timeout=180) as planes:
            for name, plane in planes.items():
                print(name, plane.server)
    """
    if len(set(names)) != len(names) or not all(names):
        raise ValueError(f"start_control_planes: names must be distinct and non-empty: {names}")
    planes = start_all({name: ControlPlane(**options) for name in names})
    try:
        yield planes
    finally:
        stop_all(planes.values())
