"""A control plane with kube-apiserver's ``ShardedListAndWatch`` gate on, for this package.

The session's shared control plane runs without alpha gates (as a default cluster does); the
sharding tests need the gate on for the server-side selector, and use the shared one (gate off)
for the client-side fallback.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from kubectrl.envtest import ControlPlane


@pytest.fixture(scope="package")
def sharded_control_plane() -> Iterator[ControlPlane]:
    """etcd + kube-apiserver with ``--feature-gates=ShardedListAndWatch=true``."""
    cp = ControlPlane(feature_gates={"ShardedListAndWatch": True})
    cp.start()
    try:
        yield cp
    finally:
        cp.stop()
