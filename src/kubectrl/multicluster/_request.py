"""The reconcile request of a multicluster controller: the object's key and its cluster."""

from __future__ import annotations

import dataclasses

from kubectrl.runtime import Request

__all__ = ["ClusterRequest"]


@dataclasses.dataclass(frozen=True, order=True)
class ClusterRequest(Request):
    """A :class:`~kubectrl.runtime.Request` that also names the cluster the object lives in.

    multicluster-runtime's ``mcreconcile.Request`` (``pkg/reconcile/request.go``): the same
    ``namespace``/``name`` key plus ``cluster``, the name the provider engaged the cluster
    under. It is the workqueue key, so one object in two clusters is two keys, reconciled
    independently (and possibly at once); one key is never reconciled by two workers at once.

    ``str()`` is ``cluster://<cluster>/<namespace>/<name>`` as upstream prints it.

    Example::

        >>> request = ClusterRequest("default", "web", cluster="east")
        >>> str(request), request.cluster
        ('cluster://east/default/web', 'east')
    """

    cluster: str = dataclasses.field(default="", kw_only=True)

    def __post_init__(self) -> None:
        if not self.cluster:
            raise ValueError(f"ClusterRequest {Request.__str__(self)!r}: cluster must not be empty")

    def __str__(self) -> str:
        return f"cluster://{self.cluster}/{Request.__str__(self)}"
