"""The pod verbs (``client.pods``): logs, exec, attach, port-forward, eviction.

Example::

    from kubectrl.client.pods import BlockingExecSession
"""

from __future__ import annotations

from kubectrl._internal.exports import publish as _publish
from kubectrl.client._pods import Pods
from kubectrl.client._pods_blocking import BlockingExecSession, BlockingPods, BlockingPortForward
from kubectrl.client._portforward import PortForward
from kubectrl.client._remotecommand import ExecResult, ExecSession, SessionOpener

__all__ = [
    "BlockingExecSession",
    "BlockingPods",
    "BlockingPortForward",
    "ExecResult",
    "ExecSession",
    "Pods",
    "PortForward",
    "SessionOpener",
]

_publish(__name__, globals(), __all__, private_of="kubectrl.client")
