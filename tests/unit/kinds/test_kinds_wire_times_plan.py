"""Wire texts of datetimes survive a round trip wherever the model nests them.

:func:`kubectrl.kinds.from_dict` visits only the fields whose type may hold a datetime; these
cases put timestamps at every depth the built-in models have them (metadata, managed fields,
a pod template's metadata, status conditions) and in a model with ``Any`` fields.
"""

from __future__ import annotations

from typing import Any

import pydantic
from kubernetes.client.models import V1Deployment, V1Pod

from kubectrl import kinds

ODD = "2026-11-24T10:00:00.500000+00:00"  # not what a datetime would print


def _deployment() -> dict[str, Any]:
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {
            "name": "d",
            "namespace": "n",
            "creationTimestamp": ODD,
            "managedFields": [
                {"manager": "m", "operation": "Update", "time": "2026-11-24T10:00:01Z"}
            ],
            "labels": {"app": "x"},
        },
        "spec": {
            "selector": {"matchLabels": {"app": "x"}},
            "template": {
                "metadata": {"labels": {"app": "x"}, "creationTimestamp": "2026-01-02T03:04:05Z"},
                "spec": {"containers": [{"name": "c", "image": "i"}]},
            },
        },
        "status": {
            "conditions": [
                {
                    "type": "Available",
                    "status": "True",
                    "lastUpdateTime": "2026-11-24T10:00:02.000Z",
                    "lastTransitionTime": "2026-11-24T10:00:03+00:00",
                }
            ]
        },
    }


def test_every_nested_timestamp_keeps_its_text() -> None:
    data = _deployment()
    assert kinds.to_dict(kinds.from_dict(V1Deployment, data)) == data


def test_pod_times_in_container_statuses_keep_their_text() -> None:
    data = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "p", "deletionTimestamp": ODD},
        "status": {
            "startTime": "2026-11-24T10:00:00.1Z",
            "containerStatuses": [
                {
                    "name": "c",
                    "image": "i",
                    "imageID": "",
                    "ready": True,
                    "restartCount": 0,
                    "state": {"running": {"startedAt": "2026-11-24T10:00:00.25+00:00"}},
                }
            ],
        },
    }
    assert kinds.to_dict(kinds.from_dict(V1Pod, data)) == data


class Loose(pydantic.BaseModel):
    model_config = pydantic.ConfigDict(extra="forbid")
    anything: Any = None
    when: Any = None
    nested: dict[str, Any] | None = None


def test_fields_typed_any_are_still_visited() -> None:
    # Any holds the raw text here (pydantic does not parse it), so nothing to keep; the walk
    # must not fail on what it finds there and must leave the values as validated.
    data = {"anything": {"x": [1, "a"]}, "when": ODD, "nested": {"t": ODD}}
    model = kinds.from_dict(Loose, data)
    assert model.when == ODD
    assert model.nested == {"t": ODD}


def test_plan_leaves_out_fields_that_cannot_hold_a_time() -> None:
    from kubernetes.client.models import V1Container, V1ObjectMeta

    meta = dict(kinds._time_fields(V1ObjectMeta) or ())
    assert meta.get("creation_timestamp") == "creationTimestamp"
    assert "managed_fields" in meta
    assert "labels" not in meta
    assert "name" not in meta
    assert kinds._time_fields(V1Container) == ()
