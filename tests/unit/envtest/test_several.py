"""Several control planes started side by side: all or none (kubectrl.envtest._several).

The real start is exercised by tests/integration/multicluster (three planes); here, stand-ins
show what happens when one of them fails.
"""

from __future__ import annotations

import pytest

from kubectrl.envtest import ControlPlaneError, start_control_planes
from kubectrl.envtest._several import start_all, stop_all


class Plane:
    def __init__(self, fail: str | None = None) -> None:
        self.fail = fail
        self.started = False
        self.stopped = False

    def start(self) -> Plane:
        if self.fail:
            raise ControlPlaneError(self.fail)
        self.started = True
        return self

    def stop(self) -> None:
        self.stopped = True


def test_all_start_together() -> None:
    planes = {"east": Plane(), "west": Plane()}
    assert start_all(planes) is planes
    assert all(p.started and not p.stopped for p in planes.values())


def test_one_failure_stops_the_others_and_is_named() -> None:
    planes = {"east": Plane(), "west": Plane(fail="etcd did not start"), "north": Plane()}
    with pytest.raises(ControlPlaneError, match=r"1 of 3 control planes failed: west: etcd"):
        start_all(planes)
    assert all(p.stopped for p in planes.values())


def test_a_failing_stop_does_not_keep_the_others_running() -> None:
    class Stuck(Plane):
        def stop(self) -> None:
            raise OSError("kill failed")

    others = [Plane(), Plane()]
    with pytest.raises(OSError, match="kill failed"):
        stop_all([others[0], Stuck(), others[1]])
    assert all(p.stopped for p in others)


def test_names_must_be_distinct() -> None:
    with pytest.raises(ValueError, match="distinct"), start_control_planes("a", "a"):
        pass
