"""Errors raised by the local control plane."""

from __future__ import annotations

from kubectrl.errors import KubectrlError

__all__ = ["BinaryNotFoundError", "ControlPlaneError"]


class ControlPlaneError(KubectrlError, RuntimeError):
    """The local control plane could not start, answer or stop.

    The message carries the last log lines of etcd and kube-apiserver when they are relevant.
    A :class:`~kubectrl.errors.KubectrlError`, and still a ``RuntimeError`` as it always was.
    Not retryable as is (a port taken, a binary missing, a crash in the logs).
    """


class BinaryNotFoundError(ControlPlaneError):
    """etcd or kube-apiserver could not be found or built; the message lists what was tried."""
