"""Behaviour the fake does not implement: each case passes on the real server and, on the fake,
must fail with a clear ``UnsupportedFeatureError`` (a ``NotImplementedError``) naming it.

Upstream: staging/src/k8s.io/apiserver/pkg/endpoints/handlers/patch.go (apply to a subresource).
"""

from __future__ import annotations

import pytest
from contract_helpers import DEPLOY, Target, deployment, unique


@pytest.mark.known_difference("server-side apply to the scale subresource")
async def test_apply_to_the_scale_subresource(target: Target) -> None:
    c, ns, name = target.client, target.namespace, unique("applyscale")
    await c.create(deployment(name, ns, replicas=1))
    scale = {
        "apiVersion": "autoscaling/v1",
        "kind": "Scale",
        "metadata": {"name": name, "namespace": ns},
        "spec": {"replicas": 3},
    }
    applied = await c.subresource("scale").patch(
        DEPLOY,
        name,
        scale,
        namespace=ns,
        patch_type="apply",
        field_manager="scaler",
        force=True,  # the creator's field manager owns spec.replicas
    )
    assert applied["spec"]["replicas"] == 3
    assert (await c.get(DEPLOY, name, namespace=ns))["spec"]["replicas"] == 3
