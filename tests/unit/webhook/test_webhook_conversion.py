"""Hub-and-spoke conversion (controller-runtime pkg/webhook/conversion/conversion.go).

A spoke converts to the hub with to_hub and from it with from_hub; a failed conversion answers the
whole review with result.status "Failure" and the message (controller-runtime's errored()), and
converts nothing.
"""

from __future__ import annotations

import logging
from typing import Any

import pytest

from kubectrl.webhook import ConversionError, ConversionHandler

from .webhook_models import Foo, FooV1beta1, foo

ALPHA = "samplecontroller.k8s.io/v1alpha1"
BETA = "samplecontroller.k8s.io/v1beta1"


def beta(name: str, deployment: dict[str, Any]) -> dict[str, Any]:
    return {
        "apiVersion": BETA,
        "kind": "Foo",
        "metadata": {"name": name, "namespace": "default", "uid": f"uid-{name}"},
        "spec": {"deployment": deployment},
    }


def review(desired: str, *objects: dict[str, Any]) -> dict[str, Any]:
    return {
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "ConversionReview",
        "request": {"uid": "conv-1", "desiredAPIVersion": desired, "objects": list(objects)},
    }


@pytest.fixture
def handler() -> ConversionHandler:
    h = ConversionHandler()
    h.add(Foo, FooV1beta1)
    return h


def test_hub_to_spoke_list_keeps_metadata(handler: ConversionHandler) -> None:
    a = foo("a", deploymentName="web", replicas=2)
    a["metadata"].update(
        labels={"app": "x"},
        resourceVersion="17",
        managedFields=[{"manager": "kubectl", "operation": "Apply", "fieldsV1": {"f:spec": {}}}],
        creationTimestamp="2024-01-02T03:04:05Z",
    )
    b = foo("b", deploymentName="db")
    answer = handler.review(review(BETA, a, b))
    response = answer["response"]
    assert answer["kind"] == "ConversionReview"
    assert answer["apiVersion"] == "apiextensions.k8s.io/v1"
    assert response["uid"] == "conv-1"
    assert response["result"] == {"status": "Success"}
    first, second = response["convertedObjects"]
    assert first == {
        "apiVersion": BETA,
        "kind": "Foo",
        "metadata": a["metadata"],
        "spec": {"deployment": {"name": "web", "replicas": 2}},
    }
    assert second["spec"] == {"deployment": {"name": "db"}}
    assert second["metadata"] == b["metadata"]


def test_spoke_to_hub_list(handler: ConversionHandler) -> None:
    objects = [beta("a", {"name": "web", "replicas": 3}), beta("b", {"name": "db"})]
    response = handler.review(review(ALPHA, *objects))["response"]
    assert response["result"] == {"status": "Success"}
    assert [o["apiVersion"] for o in response["convertedObjects"]] == [ALPHA, ALPHA]
    assert [o["spec"] for o in response["convertedObjects"]] == [
        {"deploymentName": "web", "replicas": 3},
        {"deploymentName": "db"},
    ]
    assert [o["metadata"] for o in response["convertedObjects"]] == [o["metadata"] for o in objects]


def test_round_trip_is_lossless(handler: ConversionHandler) -> None:
    original = foo("a", deploymentName="web", replicas=4)
    there = handler.convert(original, BETA)
    back = handler.convert(there, ALPHA)
    assert back == original


def test_same_version_is_returned_as_is(handler: ConversionHandler) -> None:
    original = foo("a", deploymentName="web")
    assert handler.convert(original, ALPHA) == original


def test_a_failing_conversion_names_the_object(
    handler: ConversionHandler, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.ERROR, "kubectrl.webhook")
    objects = [beta("good", {"name": "web"}), beta("bad", {"name": "explode"})]
    response = handler.review(review(ALPHA, *objects))["response"]
    assert response["uid"] == "conv-1"
    assert response["convertedObjects"] == []
    assert response["result"]["status"] == "Failure"
    message = response["result"]["message"]
    assert message.startswith(f"converting Foo default/bad from {BETA} to {ALPHA}: ")
    assert "deployment name 'explode' cannot be converted" in message
    assert any(
        "default/bad" in r.getMessage() and "conv-1" in r.getMessage() for r in caplog.records
    )


@pytest.mark.parametrize(
    ("obj", "desired", "fragment"),
    [
        (foo("a"), "samplecontroller.k8s.io/v2", "unknown version v2 (known: v1alpha1, v1beta1)"),
        ({**foo("a"), "apiVersion": "samplecontroller.k8s.io/v0"}, BETA, "unknown version v0"),
        (
            {**foo("a"), "kind": "Bar"},
            BETA,
            "no conversion is registered for samplecontroller.k8s.io/Bar",
        ),
        (foo("a"), "other.example.com/v1", "the group differs"),
        ({**foo("a"), "spec": {"replicas": "x"}}, BETA, "converting Foo default/a"),
    ],
)
def test_conversion_errors(
    handler: ConversionHandler, obj: dict[str, Any], desired: str, fragment: str
) -> None:
    with pytest.raises(ConversionError, match=r"^converting (Foo|Bar) ") as info:
        handler.convert(obj, desired)
    assert fragment in str(info.value)
    answer = handler.review(review(desired, obj))["response"]
    assert answer["result"]["status"] == "Failure"
    assert fragment in answer["result"]["message"]


def test_malformed_reviews_raise_value_error(handler: ConversionHandler) -> None:
    with pytest.raises(ValueError, match="no request"):
        handler.review({"kind": "ConversionReview"})
    with pytest.raises(ValueError, match="desiredAPIVersion"):
        handler.review({"request": {"uid": "x", "objects": []}})


def test_add_checks_the_models() -> None:
    handler = ConversionHandler()
    with pytest.raises(ValueError, match="has the hub's version v1alpha1"):
        handler.add(Foo, Foo)
    with pytest.raises(TypeError, match="has no to_hub"):
        handler.add(FooV1beta1, Foo)
    handler.add(Foo, FooV1beta1)
    with pytest.raises(ValueError, match="one hub per kind"):
        handler.add(FooV1beta1)
    assert handler.kinds == [
        ("samplecontroller.k8s.io", "Foo", "v1alpha1", ["v1alpha1", "v1beta1"])
    ]
