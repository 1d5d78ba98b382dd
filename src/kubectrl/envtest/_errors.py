"""Errors raised by the local control plane."""

from __future__ import annotations

__all__ = ["BinaryNotFoundError", "ControlPlaneError"]


class ControlPlaneError(RuntimeError):
    """The local control plane could not start, answer or stop.

    The message carries the last log lines of etcd and kube-apiserver when they are relevant.
    """


class BinaryNotFoundError(ControlPlaneError):
    """etcd or kube-apiserver could not be found or built; the message lists what was tried."""
