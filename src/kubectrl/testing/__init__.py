"""Testing kit: :class:`FakeAPI`, an in-memory kube-apiserver for fast controller unit tests.

The fake speaks the real HTTP API through an httpx transport, so a reconciler written for
:class:`~kubectrl.client.AsyncClient`, :class:`~kubectrl.client.BlockingClient` or a ``Manager``
runs on it unchanged; the contract suite (``tests/contract``) runs the same cases on a real
kube-apiserver and on the fake. See docs/testing.md.

Example::

    api = FakeAPI()
    api.seed({"apiVersion": "v1", "kind": "ConfigMap",
              "metadata": {"name": "settings", "namespace": "default"}, "data": {"a": "1"}})
    async with AsyncClient(api.config()) as client:
        ...
"""

from __future__ import annotations

from kubectrl._internal.exports import publish as _publish
from kubectrl.errors import UnsupportedFeatureError
from kubectrl.testing._fake import FakeAPI
from kubectrl.testing._fake_pods import ExecCall, FakePods
from kubectrl.testing._helpers import consistently, eventually, run_manager
from kubectrl.testing._versions import VersionSkew, version_skew

__all__ = [
    "ExecCall",
    "FakeAPI",
    "FakePods",
    "UnsupportedFeatureError",
    "VersionSkew",
    "consistently",
    "eventually",
    "run_manager",
    "version_skew",
]

_publish(__name__, globals(), __all__)
