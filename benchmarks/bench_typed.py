"""What typing costs per object read from the cache: a typed get vs a dict get.

A cached read is a store lookup plus building what the caller gets: for a kind named by a tuple,
a deep copy of the cached dict (``copy.deepcopy``); for a kind named by a model class, a new model
instance built from the cached dict (``kubectrl.runtime._typed.model_view``: the copy where the
model would otherwise share objects with the cache, then ``kubectrl.kinds.from_dict``). The
lookup costs the same either way, so this measures the part that differs, per object, for a
ConfigMap and a Deployment shaped like the API server returns them (``managedFields`` included).
For scale, the last column is the cost of turning the model back into the API's dict
(``kubectrl.kinds.to_dict``), which every write of a model pays.

Prints a table (µs per object, median of several runs); no pass/fail. Run with ``nox -s bench``
or ``python benchmarks/bench_typed.py``.
"""

# A benchmark reports by printing its table.
# ruff: noqa: T201

from __future__ import annotations

import argparse
import copy
import statistics
import time
from collections.abc import Callable
from typing import Any

from kubernetes.client.models import V1ConfigMap, V1Deployment

from kubectrl.kinds import to_dict
from kubectrl.runtime._typed import model_view

STAMP = "2026-01-01T00:00:00Z"


def _metadata(name: str) -> dict[str, Any]:
    return {
        "name": name,
        "namespace": "default",
        "uid": "6f1c7d2e-0000-4000-8000-000000000001",
        "resourceVersion": "123456",
        "generation": 3,
        "creationTimestamp": STAMP,
        "labels": {"app": name, "tier": "web"},
        "annotations": {"kubectrl.dev/owner": "bench"},
        "managedFields": [
            {
                "manager": "kubectl",
                "operation": "Update",
                "apiVersion": "v1",
                "time": STAMP,
                "fieldsType": "FieldsV1",
                "fieldsV1": {"f:metadata": {"f:labels": {".": {}, "f:app": {}}}},
            }
        ],
    }


def configmap() -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": _metadata("settings"),
        "data": {f"key-{i}": f"value-{i}" * 4 for i in range(10)},
    }


def deployment() -> dict[str, Any]:
    container = {
        "name": "web",
        "image": "nginx:1.27",
        "ports": [{"containerPort": 80, "protocol": "TCP"}],
        "env": [{"name": "MODE", "value": "fast"}],
        "resources": {"limits": {"cpu": "500m", "memory": "128Mi"}},
        "imagePullPolicy": "IfNotPresent",
        "terminationMessagePath": "/dev/termination-log",
        "terminationMessagePolicy": "File",
    }
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": _metadata("web"),
        "spec": {
            "replicas": 3,
            "selector": {"matchLabels": {"app": "web"}},
            "strategy": {
                "type": "RollingUpdate",
                "rollingUpdate": {"maxSurge": "25%", "maxUnavailable": "25%"},
            },
            "template": {
                "metadata": {"labels": {"app": "web"}},
                "spec": {
                    "containers": [container],
                    "restartPolicy": "Always",
                    "dnsPolicy": "ClusterFirst",
                    "terminationGracePeriodSeconds": 30,
                },
            },
        },
        "status": {
            "replicas": 3,
            "readyReplicas": 3,
            "availableReplicas": 3,
            "observedGeneration": 3,
            "conditions": [
                {
                    "type": "Available",
                    "status": "True",
                    "lastTransitionTime": STAMP,
                    "lastUpdateTime": STAMP,
                    "reason": "MinimumReplicasAvailable",
                    "message": "Deployment has minimum availability.",
                }
            ],
        },
    }


def per_object(fn: Callable[[], Any], number: int, runs: int) -> float:
    """Median over ``runs`` of the µs per call of ``fn`` (``number`` calls per run)."""
    fn()  # warm up (pydantic schemas, kubectrl's per-class plans)
    samples = []
    for _ in range(runs):
        start = time.perf_counter()
        for _ in range(number):
            fn()
        samples.append((time.perf_counter() - start) / number * 1e6)
    return statistics.median(samples)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--number", type=int, default=2000, help="reads per run")
    parser.add_argument("--runs", type=int, default=7, help="runs (the median is reported)")
    args = parser.parse_args()

    rows = []
    for name, cls, obj in (
        ("ConfigMap", V1ConfigMap, configmap()),
        ("Deployment", V1Deployment, deployment()),
    ):
        api_version, kind = obj["apiVersion"], obj["kind"]
        as_dict = per_object(lambda o=obj: copy.deepcopy(o), args.number, args.runs)
        typed = per_object(
            lambda c=cls, o=obj, a=api_version, k=kind: model_view(c, o, a, k),
            args.number,
            args.runs,
        )
        view = model_view(cls, obj, api_version, kind)
        write = per_object(lambda v=view: to_dict(v), args.number, args.runs)
        rows.append((name, as_dict, typed, write))

    print(f"cached get, µs per object (median of {args.runs} runs x {args.number} reads)")
    print(
        f"{'kind':<12} {'dict (deepcopy)':>16} {'typed (model)':>14} {'typed/dict':>11}"
        f" {'model->dict (write)':>20}"
    )
    for name, as_dict, typed, write in rows:
        print(
            f"{name:<12} {as_dict:>16.1f} {typed:>14.1f} {typed / as_dict:>10.2f}x {write:>20.1f}"
        )


if __name__ == "__main__":
    main()
