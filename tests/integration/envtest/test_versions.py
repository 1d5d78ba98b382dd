"""The chosen Kubernetes version against what the real apiserver says at ``/version``.

What the apiserver reports comes from ``k8s.io/component-base/version`` (``gitVersion``, set by
the build's ``-ldflags -X``, as kubernetes ``hack/lib/version.sh`` sets it); the skew check
compares it with FakeAPI's tables, the built-in schemas and the ``kubernetes`` package's models.
"""

from __future__ import annotations

import pytest

from kubectrl.apiserver import KUBERNETES_VERSION
from kubectrl.envtest import ControlPlane, ControlPlaneError
from kubectrl.envtest._binaries import find_binaries
from kubectrl.testing import version_skew

pytestmark = pytest.mark.integration


def minor(version: str) -> str:
    return ".".join(version.lstrip("v").split(".")[:2])


def test_the_server_says_the_chosen_version(control_plane: ControlPlane) -> None:
    with control_plane.http_client() as http:
        served = http.get("/version").json()["gitVersion"]
    assert control_plane.server_version == served
    assert minor(served) == control_plane.version


def test_a_skew_between_the_tables_and_the_server_is_noticed(control_plane: ControlPlane) -> None:
    """Same minor: no problem. Another minor (``KUBECTRL_ENVTEST_K8S_VERSION=1.37``): FakeAPI's
    tables and the schemas are each named, so a differential run cannot miss it."""
    skew = version_skew(control_plane.server_version)
    assert skew.server == control_plane.server_version
    if minor(control_plane.server_version) == minor(KUBERNETES_VERSION):
        assert skew.problems() == []
    else:
        problems = skew.problems()
        assert f"FakeAPI's tables are {KUBERNETES_VERSION}" in problems[0]
        assert f"the schemas are {KUBERNETES_VERSION}" in problems[1]


def test_an_apiserver_of_another_minor_than_asked_is_refused(control_plane: ControlPlane) -> None:
    binaries = find_binaries(build=False, version=control_plane.version)
    other = "1.37" if control_plane.version != "1.37" else "1.36"
    # (1.37 needs this flag, which 1.36 takes too: the binaries must start to say their version.)
    cp = ControlPlane(
        binaries=binaries, version=other, apiserver_args=["--endpoint-reconciler-type=none"]
    )
    with pytest.raises(ControlPlaneError) as info:
        cp.start()
    message = str(info.value)
    assert f"asked for Kubernetes {other}" in message
    assert control_plane.server_version in message
    assert not cp.running
