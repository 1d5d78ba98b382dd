"""The differential fuzzer for built-in kinds: valid objects mutated into near-misses, each sent
as a dry-run create, update or JSON merge patch (of an object created valid) to the real
kube-apiserver and to FakeAPI; the status code, the field paths of the causes and the object as it
would be stored must agree.

The CI budget is small (``KUBECTRL_FUZZ_EXAMPLES``, 200 by default, a few seconds); a long run::

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
from contract_helpers import kubernetes_minor
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kubectrl.client import AsyncClient, load_kubeconfig
from kubectrl.errors import APIError
from kubectrl.testing import FakeAPI

pytestmark = pytest.mark.integration

_EXAMPLES = int(os.environ.get("KUBECTRL_FUZZ_EXAMPLES", "200"))
# The CI budget draws the same examples every run (derandomized): a CI run checks the classes
# known so far and cannot fail on one found by chance; a long run (KUBECTRL_FUZZ_EXAMPLES set)
# draws new examples to find new classes.
_DERANDOMIZE = "KUBECTRL_FUZZ_EXAMPLES" not in os.environ
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
    "Job": {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "spec": {
            "template": {
                "spec": {
                    "restartPolicy": "Never",
                    "containers": [{"name": "c", "image": "busybox:1"}],
                }
            }
        },
    },
    "Service": {
        "apiVersion": "v1",
        "kind": "Service",
        "spec": {"selector": {"app": "x"}, "ports": [{"port": 80, "targetPort": 8080}]},
    },
    "Ingress": {
        "apiVersion": "networking.k8s.io/v1",
        "kind": "Ingress",
        "spec": {
            "rules": [
                {
                    "host": "a.example.com",
                    "http": {
                        "paths": [
                            {
                                "path": "/",
                                "pathType": "Prefix",
                                "backend": {"service": {"name": "s", "port": {"number": 80}}},
                            }
                        ]
                    },
                }
            ]
        },
    },
    "RoleBinding": {
        "apiVersion": "rbac.authorization.k8s.io/v1",
        "kind": "RoleBinding",
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": "r"},
        "subjects": [{"kind": "ServiceAccount", "name": "sa", "namespace": "default"}],
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


def merge_patch(old: Any, new: Any) -> Any:
    """The JSON merge patch (RFC 7386) that turns ``old`` into ``new``."""
    if not isinstance(old, dict) or not isinstance(new, dict):
        return copy.deepcopy(new)
    patch: dict[str, Any] = {key: None for key in old if key not in new}
    for key, value in new.items():
        if key not in old:
            patch[key] = copy.deepcopy(value)
        elif old[key] != value:
            patch[key] = merge_patch(old[key], value)
    return patch


async def _outcome(
    client: AsyncClient, verb: str, obj: dict[str, Any], base: dict[str, Any] | None
) -> tuple[Any, ...]:
    try:
        if verb == "create":
            got = await client.create(copy.deepcopy(obj), dry_run=True)
        elif verb == "update":
            assert base is not None
            body = copy.deepcopy(obj)
            body["metadata"]["resourceVersion"] = base["metadata"]["resourceVersion"]
            got = await client.update(body, dry_run=True)
        else:
            assert base is not None
            meta = obj["metadata"]
            got = await client.patch(
                (obj["apiVersion"], obj["kind"]),
                meta["name"],
                merge_patch(_writable(base), obj),
                namespace=meta["namespace"],
                dry_run=True,
            )
    except APIError as err:
        return (err.code, sorted(c.field for c in err.causes))
    return (200 if verb != "create" else 201, _normal(got))


def _writable(stored: dict[str, Any]) -> dict[str, Any]:
    """What a client sent to make ``stored`` (a patch is computed against it, so both servers'
    own system fields and defaults are left alone)."""
    return copy.deepcopy(_VALID[stored["kind"]]) | {
        "metadata": {
            "name": stored["metadata"]["name"],
            "namespace": stored["metadata"]["namespace"],
        }
    }


def test_builtin_near_misses_agree(kubectrl_control_plane: Any, real_module_namespace: str) -> None:
    """Creates, updates and merge patches (dry run) of near-misses: the two servers agree."""
    import asyncio

    config = load_kubeconfig(kubectrl_control_plane.kubeconfig.path).with_options(rate_limit=None)
    api = FakeAPI(version=kubernetes_minor())
    api.seed({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": real_module_namespace}})
    loop = asyncio.new_event_loop()
    real = AsyncClient(config)
    fake = AsyncClient(api.config())
    counter = iter(range(10**9))
    sent = [0]
    bases: dict[tuple[str, str], dict[str, Any]] = {}

    async def base(client: AsyncClient, which: str, kind: str) -> dict[str, Any]:
        """The valid object of ``kind`` each update and patch starts from (created once)."""
        if (which, kind) not in bases:
            obj = copy.deepcopy(_VALID[kind])
            obj["metadata"] = {
                "name": f"fz-base-{kind.lower()}",
                "namespace": real_module_namespace,
            }
            bases[which, kind] = await client.create(obj)
        return bases[which, kind]

    @settings(
        max_examples=_EXAMPLES,
        deadline=None,
        suppress_health_check=list(HealthCheck),
        database=None,
        derandomize=_DERANDOMIZE,
    )
    @given(obj=near_miss(), verb=st.sampled_from(["create", "update", "patch"]))
    def case(obj: dict[str, Any], verb: str) -> None:
        sent[0] += 1
        obj = copy.deepcopy(obj)
        meta = obj.get("metadata") if isinstance(obj.get("metadata"), dict) else None
        if meta is None:
            meta = obj["metadata"] = {}
        kind = obj["kind"]
        if verb == "create":
            meta["name"] = f"fz-{next(counter)}"
        else:
            meta["name"] = f"fz-base-{kind.lower()}"
        meta["namespace"] = real_module_namespace
        got = {}
        for which, client in (("real", real), ("fake", fake)):
            stored = (
                None if verb == "create" else loop.run_until_complete(base(client, which, kind))
            )
            got[which] = loop.run_until_complete(_outcome(client, verb, obj, stored))
        assert got["fake"] == got["real"], f"{verb} {obj}\nreal: {got['real']}\nfake: {got['fake']}"

    try:
        case()
    finally:
        print(f"{sent[0]} examples sent to both servers")  # shown with -s or on failure
        loop.run_until_complete(real.aclose())
        loop.run_until_complete(fake.aclose())
        loop.close()
