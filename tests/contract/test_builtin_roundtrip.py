"""A typed read -> unchanged write is a no-op: every field, timestamps included, comes back as it
was read, so the resourceVersion stays and no watch event fires.

Upstream: staging/src/k8s.io/apimachinery/pkg/apis/meta/v1/time.go (Time: whole seconds) and
micro_time.go (MicroTime: RFC3339Micro, six digits); staging/src/k8s.io/apiserver/pkg/registry/
generic/registry/store.go (an update that changes nothing is not written).
"""

from __future__ import annotations

from contract_helpers import Target, unique
from kubernetes.client.models import V1Lease

LEASE = ("coordination.k8s.io/v1", "Lease")


async def test_an_unchanged_typed_update_of_a_lease_changes_nothing(target: Target) -> None:
    c, ns, name = target.client, target.namespace, unique("lease")
    created = await c.create(
        {
            "apiVersion": "coordination.k8s.io/v1",
            "kind": "Lease",
            "metadata": {"name": name, "namespace": ns},
            "spec": {
                "holderIdentity": "me",
                "leaseDurationSeconds": 15,
                "acquireTime": "2024-01-01T00:00:05.000000Z",
                "renewTime": "2024-01-01T00:00:05.500000Z",
            },
        }
    )
    typed = await c.get(V1Lease, name, namespace=ns)
    updated = await c.update(typed)
    assert updated.metadata.resource_version == created["metadata"]["resourceVersion"]
    raw = await c.get(LEASE, name, namespace=ns)
    assert raw["spec"]["acquireTime"] == "2024-01-01T00:00:05.000000Z"
    assert raw["metadata"]["resourceVersion"] == created["metadata"]["resourceVersion"]
