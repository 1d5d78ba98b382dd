"""Resource locks: where the leader election record lives.

Only ``coordination.k8s.io/v1`` Leases are offered, as controller-runtime's default (the old
ConfigMap and Endpoints locks were removed upstream). :class:`ResourceLock` is the small protocol
the elector needs, so tests and other stores can plug in.
"""

from __future__ import annotations

import copy
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

from kubectrl._internal.lease import LeaderElectionRecord

if TYPE_CHECKING:
    from kubectrl.client import AsyncClient

__all__ = ["LEASE", "LeaseLock", "ResourceLock"]

LEASE = ("coordination.k8s.io/v1", "Lease")


@runtime_checkable
class ResourceLock(Protocol):
    """Storage of one :class:`LeaderElectionRecord` with optimistic concurrency.

    ``get`` raises :class:`~kubectrl.errors.NotFoundError` when there is no record yet;
    ``update`` must fail (e.g. :class:`~kubectrl.errors.ConflictError`) when the stored record
    changed since the last ``get``/``create``/``update``.

    A lock may also offer ``first_seen() -> float | None``: when this process first saw the
    record ``get`` returned last, on the elector's clock (a lock fed by a watch knows it before
    the elector's next poll). The elector then counts the holder's lease from that moment rather
    than from its poll; ``None`` means "now".
    """

    @property
    def identity(self) -> str:
        """The identity this candidate writes as holder."""
        ...

    def describe(self) -> str:
        """A human name for logs, e.g. ``"kube-system/my-controller"``."""
        ...

    async def get(self) -> LeaderElectionRecord:
        """Read the current record."""
        ...

    async def create(self, record: LeaderElectionRecord) -> None:
        """Create the record (raises ``AlreadyExistsError`` if someone was faster)."""
        ...

    async def update(self, record: LeaderElectionRecord) -> None:
        """Replace the record read last (raises ``ConflictError`` if it changed meanwhile)."""
        ...


class LeaseLock:
    """A :class:`ResourceLock` on a ``coordination.k8s.io/v1`` Lease.

    Guarantees: ``update`` sends the ``resourceVersion`` of the Lease read last, so two
    candidates can never both believe their write won. Caveats: one instance per candidate; it
    remembers the last Lease it read.

    Example::

        lock = LeaseLock(client, namespace="kube-system", name="my-controller",
                         identity=default_identity())
    """

    def __init__(self, client: AsyncClient, *, namespace: str, name: str, identity: str) -> None:
        if not identity:
            raise ValueError("LeaseLock: identity must not be empty")
        self._client = client
        self._namespace = namespace
        self._name = name
        self._identity = identity
        self._lease: dict[str, Any] | None = None

    @property
    def identity(self) -> str:
        """The identity this candidate writes as holder."""
        return self._identity

    @property
    def namespace(self) -> str:
        """Namespace of the Lease."""
        return self._namespace

    @property
    def name(self) -> str:
        """Name of the Lease."""
        return self._name

    def describe(self) -> str:
        """``namespace/name`` of the Lease."""
        return f"{self._namespace}/{self._name}"

    async def get(self) -> LeaderElectionRecord:
        """Read the Lease; raises ``NotFoundError`` when it does not exist."""
        lease = await self._client.get(LEASE, self._name, namespace=self._namespace)
        self._lease = lease
        return LeaderElectionRecord.from_lease_spec(lease.get("spec") or {})

    async def create(self, record: LeaderElectionRecord) -> None:
        """Create the Lease holding ``record``."""
        body = {
            "apiVersion": LEASE[0],
            "kind": LEASE[1],
            "metadata": {"name": self._name, "namespace": self._namespace},
            "spec": record.to_lease_spec(),
        }
        self._lease = await self._client.create(body)

    async def update(self, record: LeaderElectionRecord) -> None:
        """Replace the Lease read last (optimistic lock on its ``resourceVersion``)."""
        if self._lease is None:
            raise RuntimeError("LeaseLock.update before get or create")
        body = copy.deepcopy(self._lease)
        body.setdefault("apiVersion", LEASE[0])
        body.setdefault("kind", LEASE[1])
        body["spec"] = {**(body.get("spec") or {}), **record.to_lease_spec()}
        self._lease = await self._client.update(body)

    def __repr__(self) -> str:
        return f"LeaseLock({self.describe()!r}, identity={self._identity!r})"
