"""The differential fuzzer for built-in kinds: valid objects mutated into near-misses, each sent
(as a dry-run create) to the real kube-apiserver and to FakeAPI; the status code, the field paths
of the causes and the object as it would be stored must agree.

The CI budget is small (``KUBECTRL_FUZZ_EXAMPLES``, 40 by default); a long run::

    KUBECTRL_FUZZ_EXAMPLES=2000 python -m pytest tests/contract/test_fuzz_builtins.py -p no:randomly

Upstream: pkg/apis/*/v1/defaults.go, pkg/apis/*/validation/validation.go and the typed JSON
decoder (what each mutation exercises). What the fake does not do is in the known differences
(docs/testing.md); the mutations stay inside what it does.
"""

from __future__ import annotations

import copy
import json
import os
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kubectrl.client import AsyncClient, load_kubeconfig
from kubectrl.errors import APIError
from kubectrl.testing import FakeAPI

pytestmark = pytest.mark.integration

_EXAMPLES = int(os.environ.get("KUBECTRL_FUZZ_EXAMPLES", "40"))
_TEMPLATE = {
    "metadata": {"labels": {"app": "x"}},
    "spec": {"containers": [{"name": "c", "image": "nginx:1", "ports": [{"containerPort": 80}]}]},
}
_SELECTOR = {"matchLabels": {"app": "x"}}
_VALID: dict[str, dict[str, Any]] = {
    "Pod": {"apiVersion": "v1", "kind": "Pod", "spec": copy.deepcopy(_TEMPLATE["spec"])},
    "Deployment": {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "spec": {"selector": _SELECTOR, "template": _TEMPLATE},
    },
    "StatefulSet": {
        "apiVersion": "apps/v1",
        "kind": "StatefulSet",
        "spec": {"selector": _SELECTOR, "template": _TEMPLATE},
    },
    "DaemonSet": {
        "apiVersion": "apps/v1",
        "kind": "DaemonSet",
        "spec": {"selector": _SELECTOR, "template": _TEMPLATE},
    },
    "ReplicaSet": {
        "apiVersion": "apps/v1",
        "kind": "ReplicaSet",
        "spec": {"selector": _SELECTOR, "template": _TEMPLATE},
    },
    "CronJob": {
        "apiVersion": "batch/v1",
        "kind": "CronJob",
        "spec": {
            "schedule": "*/5 * * * *",
            "jobTemplate": {
                "spec": {
                    "template": {
                        "spec": {
                            "restartPolicy": "OnFailure",
                            "containers": [{"name": "c", "image": "busybox:1"}],
                        }
                    }
                }
            },
        },
    },
    "ConfigMap": {"apiVersion": "v1", "kind": "ConfigMap", "data": {"k": "v"}},
    "Secret": {"apiVersion": "v1", "kind": "Secret", "stringData": {"k": "v"}},
    "ServiceAccount": {"apiVersion": "v1", "kind": "ServiceAccount"},
    "PersistentVolumeClaim": {
        "apiVersion": "v1",
        "kind": "PersistentVolumeClaim",
        "spec": {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}}},
    },
    "Role": {
        "apiVersion": "rbac.authorization.k8s.io/v1",
        "kind": "Role",
        "rules": [{"apiGroups": [""], "resources": ["pods"], "verbs": ["get"]}],
    },
    "Lease": {
        "apiVersion": "coordination.k8s.io/v1",
        "kind": "Lease",
        "spec": {"holderIdentity": "me", "leaseDurationSeconds": 15},
    },
}
# Near-misses: a value the real server treats specially at a path where it is plausible.
_NEAR = st.sampled_from(
    [None, "", "Bad_Name", "a/b/c", -1, 0, 70000, 1.5, True, "x" * 70, [], {}, "abc", 3]
)
_META_FIELDS = st.sampled_from(
    [
        ("metadata", "labels"),
        ("metadata", "annotations"),
        ("metadata", "finalizers"),
    ]
)


def _paths(value: Any, prefix: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    out = [prefix] if prefix and prefix[0] not in ("apiVersion", "kind") else []
    if isinstance(value, dict):
        for key, item in value.items():
            out.extend(_paths(item, (*prefix, key)))
    elif isinstance(value, list):
        for index, item in enumerate(value):
            out.extend(_paths(item, (*prefix, index)))
    return out


@st.composite
def near_miss(draw: st.DrawFn) -> dict[str, Any]:
    """A valid built-in object with one or two values replaced by a near-miss."""
    kind = draw(st.sampled_from(sorted(_VALID)))
    obj = copy.deepcopy(_VALID[kind])
    for _ in range(draw(st.integers(0, 2))):
        if draw(st.booleans()):
            where = draw(_META_FIELDS)
            obj.setdefault("metadata", {})
            key = draw(st.sampled_from(["a", "a/b/c", "Bad Key", "example.com/x"]))
            value = draw(_NEAR)
            obj["metadata"][where[1]] = [key] if where[1] == "finalizers" else {key: value}
            continue
        paths = _paths(obj)
        if not paths:
            continue
        path = draw(st.sampled_from(paths))
        node: Any = obj
        for part in path[:-1]:
            node = node[part]
        node[path[-1]] = draw(_NEAR)
    return obj


_VOLATILE_META = ("uid", "creationTimestamp", "resourceVersion", "managedFields", "namespace")


def _normal(obj: dict[str, Any]) -> str:
    """The object without what differs per server (uid, times, versions, allocated IPs)."""
    out = copy.deepcopy(obj)
    meta = out.get("metadata") or {}
    uid = str(meta.get("uid") or "")
    for key in _VOLATILE_META:
        meta.pop(key, None)
    spec = out.get("spec") or {}
    for key in ("clusterIP", "clusterIPs"):
        spec.pop(key, None)
    text = json.dumps(out, sort_keys=True)
    return text.replace(uid, "UID") if uid else text


async def _outcome(client: AsyncClient, obj: dict[str, Any]) -> tuple[Any, ...]:
    try:
        created = await client.create(copy.deepcopy(obj), dry_run=True)
    except APIError as err:
        return (err.code, sorted(c.field for c in err.causes))
    return (201, _normal(created))


@pytest.mark.xfail(
    strict=False,
    reason="open classes the fuzzer still finds: a workload without spec (the real server "
    "names spec.template.metadata.labels, the fake spec.selector), being fixed",
)
def test_builtin_near_misses_agree(kubectrl_control_plane: Any, real_module_namespace: str) -> None:
    import asyncio

    config = load_kubeconfig(kubectrl_control_plane.kubeconfig.path).with_options(rate_limit=None)
    api = FakeAPI()
    api.seed({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": real_module_namespace}})
    loop = asyncio.new_event_loop()
    real = AsyncClient(config)
    fake = AsyncClient(api.config())
    counter = iter(range(10**9))

    @settings(
        max_examples=_EXAMPLES,
        deadline=None,
        suppress_health_check=list(HealthCheck),
        database=None,
    )
    @given(obj=near_miss())
    def case(obj: dict[str, Any]) -> None:
        obj = copy.deepcopy(obj)
        meta = obj.get("metadata") if isinstance(obj.get("metadata"), dict) else None
        if meta is None:
            meta = obj["metadata"] = {}
        meta["name"] = f"fz-{next(counter)}"
        meta["namespace"] = real_module_namespace
        got_real = loop.run_until_complete(_outcome(real, obj))
        got_fake = loop.run_until_complete(_outcome(fake, obj))
        assert got_fake == got_real, f"{obj}\nreal: {got_real}\nfake: {got_fake}"

    try:
        case()
    finally:
        loop.run_until_complete(real.aclose())
        loop.run_until_complete(fake.aclose())
        loop.close()
