"""Admission handlers without the HTTP layer: defaulters' JSON patches, validators' verdicts.

Pinned behaviour of controller-runtime's pkg/webhook/admission/defaulter_custom.go (the object is
decoded, defaulted and answered with the JSON patch between the two) and validator_custom.go
(CREATE -> ValidateCreate(obj), UPDATE -> ValidateUpdate(old, new), DELETE ->
ValidateDelete(oldObject); an error denies with 403 and the message; warnings are sent along).
"""

from __future__ import annotations

import base64
import json
import logging
from typing import Any

import pytest

from kubectrl.webhook import (
    AdmissionRequest,
    AdmissionResponse,
    DefaultingHandler,
    Denied,
    ValidatingHandler,
)
from kubectrl.webhook._jsonpatch import json_patch

from .webhook_models import Foo, admission_review, foo


def request(
    operation: str, obj: dict | None, old: dict | None = None, **kw: Any
) -> AdmissionRequest:
    return AdmissionRequest.from_dict(admission_review(operation, obj, old, **kw)["request"])


def apply_patch(doc: Any, ops: list[dict[str, Any]]) -> Any:
    """A minimal RFC 6902 applier (add/remove/replace) to check the patches round-trip."""
    import copy

    doc = copy.deepcopy(doc)
    for op in ops:
        parts = [p.replace("~1", "/").replace("~0", "~") for p in op["path"].split("/")[1:]]
        if not parts:
            doc = op["value"]
            continue
        parent = doc
        for part in parts[:-1]:
            parent = parent[int(part)] if isinstance(parent, list) else parent[part]
        last: Any = int(parts[-1]) if isinstance(parent, list) else parts[-1]
        if op["op"] == "remove":
            del parent[last]
        else:
            parent[last] = op["value"]
    return doc


class TypedDefaulter:
    def default(self, obj: Foo) -> None:
        if obj.spec.replicas is None:
            obj.spec.replicas = 1


class AsyncDictDefaulter:
    async def default(self, obj: dict) -> None:
        obj.setdefault("spec", {}).setdefault("replicas", 1)
        obj["metadata"].setdefault("labels", {})["defaulted"] = "true"


async def test_typed_defaulter_patches_the_missing_field() -> None:
    original = foo(deploymentName="web")
    response = await DefaultingHandler(Foo, TypedDefaulter()).handle(request("CREATE", original))
    assert response.is_allowed
    assert response.patch == [{"op": "add", "path": "/spec/replicas", "value": 1}]
    body = response.to_dict()
    assert body["patchType"] == "JSONPatch"
    assert json.loads(base64.b64decode(body["patch"])) == response.patch


async def test_typed_defaulter_without_changes_sends_no_patch() -> None:
    """A model that knows fewer fields than the object (unknown keys kept) makes no patch."""
    original = foo(deploymentName="web", replicas=3)
    original["spec"]["futureField"] = {"x": 1}
    original["metadata"]["creationTimestamp"] = "2024-01-02T03:04:05Z"
    response = await DefaultingHandler(Foo, TypedDefaulter()).handle(request("CREATE", original))
    assert response.is_allowed
    assert response.patch is None
    assert "patch" not in response.to_dict()


async def test_async_dict_defaulter() -> None:
    original = foo(deploymentName="web")
    handler = DefaultingHandler(("samplecontroller.k8s.io/v1alpha1", "Foo"), AsyncDictDefaulter())
    response = await handler.handle(request("UPDATE", original, foo(deploymentName="web")))
    assert response.patch is not None
    mutated = apply_patch(original, response.patch)
    assert mutated["spec"]["replicas"] == 1
    assert mutated["metadata"]["labels"] == {"defaulted": "true"}
    assert original["spec"] == {"deploymentName": "web"}  # the request's dict is not changed


async def test_defaulter_that_raises_is_a_500_naming_it(caplog: pytest.LogCaptureFixture) -> None:
    class Broken:
        def default(self, obj: Foo) -> None:
            raise RuntimeError("boom")

    caplog.set_level(logging.ERROR, "kubectrl.webhook")
    response = await DefaultingHandler(Foo, Broken()).handle(request("CREATE", foo()))
    assert not response.is_allowed
    assert response.code == 500
    assert "Broken" in response.message
    assert "boom" in response.message
    [record] = [r for r in caplog.records if "boom" in r.getMessage()]
    assert "default/example-foo" in record.getMessage()
    assert "4b1a6c4e-0000-4000-8000-000000000001" in record.getMessage()
    assert "Foo" in record.getMessage()


async def test_defaulter_admits_an_object_that_breaks_the_model_unchanged() -> None:
    """controller-runtime's defaulter answers 400 when Go's JSON decoding fails, which happens
    only on a wrong type; pydantic also refuses values out of the model's bounds. Either way the
    CRD's schema (generated from the model, run after mutating webhooks) refuses the object with
    the API's own 422 naming the field, so the defaulter admits it unchanged with a warning."""
    bad = foo()
    bad["spec"] = {"replicas": "many"}
    response = await DefaultingHandler(Foo, TypedDefaulter()).handle(request("CREATE", bad))
    assert (response.is_allowed, response.patch) == (True, None)
    [warning] = response.warnings
    assert warning.startswith("not defaulted: Foo default/example-foo does not validate as Foo")
    assert "spec.replicas" in warning


async def test_validator_refuses_an_object_that_breaks_the_model_with_422() -> None:
    bad = foo()
    bad["spec"] = {"replicas": "many"}
    response = await ValidatingHandler(Foo, FooValidator()).handle(request("CREATE", bad))
    assert (response.is_allowed, response.code) == (False, 422)
    assert response.message.startswith("Foo default/example-foo does not validate as Foo")
    assert "spec.replicas" in response.message


async def test_handler_refuses_another_kind() -> None:
    req = request("CREATE", {"apiVersion": "v1", "kind": "ConfigMap"}, kind=("", "v1", "ConfigMap"))
    response = await DefaultingHandler(Foo, TypedDefaulter()).handle(req)
    assert (response.is_allowed, response.code) == (False, 400)
    assert "ConfigMap" in response.message


class FooValidator:
    """The sample's rules: deploymentName required; replicas 1..10; name immutable."""

    def validate_create(self, obj: Foo) -> list[str] | None:
        if not obj.spec.deployment_name:
            raise Denied("spec.deploymentName is required")
        if obj.spec.replicas is not None and not 1 <= obj.spec.replicas <= 10:
            raise ValueError(f"spec.replicas must be between 1 and 10, got {obj.spec.replicas}")
        return ["replicas above 5 cost money"] if (obj.spec.replicas or 0) > 5 else None

    async def validate_update(self, old: Foo, new: Foo) -> list[str] | None:
        if old.spec.deployment_name != new.spec.deployment_name:
            raise Denied("spec.deploymentName is immutable")
        return self.validate_create(new)

    def validate_delete(self, obj: Foo) -> list[str] | None:
        if obj.metadata.name == "precious":
            raise Denied("precious Foos stay", warnings=["try another one"])
        return ["deleted"]


@pytest.mark.parametrize(
    ("operation", "obj", "old", "allowed", "message", "warnings"),
    [
        ("CREATE", foo(deploymentName="web", replicas=2), None, True, "", []),
        (
            "CREATE",
            foo(deploymentName="web", replicas=7),
            None,
            True,
            "",
            ["replicas above 5 cost money"],
        ),
        ("CREATE", foo(replicas=2), None, False, "spec.deploymentName is required", []),
        (
            "CREATE",
            foo(deploymentName="web", replicas=11),
            None,
            False,
            "spec.replicas must be between 1 and 10, got 11",
            [],
        ),
        (
            "UPDATE",
            foo(deploymentName="web2"),
            foo(deploymentName="web"),
            False,
            "spec.deploymentName is immutable",
            [],
        ),
        ("UPDATE", foo(deploymentName="web", replicas=3), foo(deploymentName="web"), True, "", []),
        ("DELETE", None, foo("precious"), False, "precious Foos stay", ["try another one"]),
        ("DELETE", None, foo("other"), True, "", ["deleted"]),
    ],
)
async def test_validator(
    operation: str,
    obj: dict | None,
    old: dict | None,
    allowed: bool,
    message: str,
    warnings: list[str],
) -> None:
    handler = ValidatingHandler(Foo, FooValidator(), delete=True)
    response = await handler.handle(request(operation, obj, old))
    assert response.is_allowed is allowed
    assert response.message == message
    assert response.warnings == warnings
    if not allowed:
        assert response.code == 403
        assert response.to_dict()["status"] == {
            "code": 403,
            "message": message,
            "reason": "Forbidden",
        }


async def test_validator_that_raises_is_a_500_naming_it(caplog: pytest.LogCaptureFixture) -> None:
    class Crashing:
        def validate_create(self, obj: dict) -> None:
            raise KeyError("spec")

        def validate_update(self, old: dict, new: dict) -> None: ...

        def validate_delete(self, obj: dict) -> None: ...

    caplog.set_level(logging.ERROR, "kubectrl.webhook")
    handler = ValidatingHandler(("samplecontroller.k8s.io/v1alpha1", "Foo"), Crashing())
    response = await handler.handle(request("CREATE", foo()))
    assert (response.is_allowed, response.code) == (False, 500)
    assert "Crashing.validate_create" in response.message
    assert any("default/example-foo" in r.getMessage() for r in caplog.records)


def test_validator_operations_follow_kubebuilder() -> None:
    assert ValidatingHandler(Foo, FooValidator()).operations == ("CREATE", "UPDATE")
    assert ValidatingHandler(Foo, FooValidator(), delete=True).operations == (
        "CREATE",
        "UPDATE",
        "DELETE",
    )
    assert DefaultingHandler(Foo, TypedDefaulter()).operations == ("CREATE", "UPDATE")


def test_denied_reasons_follow_the_code() -> None:
    """apimachinery pkg/apis/meta/v1/types.go StatusReason: 422 Invalid, 403 Forbidden..."""
    assert AdmissionResponse.denied("x", 422).to_dict()["status"]["reason"] == "Invalid"
    assert AdmissionResponse.denied("x").to_dict()["status"]["reason"] == "Forbidden"
    assert "reason" not in AdmissionResponse.denied("x", 418).to_dict()["status"]


def test_response_constructors() -> None:
    assert AdmissionResponse.allowed().to_dict() == {"uid": "", "allowed": True}
    errored = AdmissionResponse.errored(400, "bad").to_dict()
    assert errored == {"uid": "", "allowed": False, "status": {"code": 400, "message": "bad"}}
    assert AdmissionResponse.patched({"a": 1}, {"a": 1}).patch is None


@pytest.mark.parametrize(
    ("a", "b"),
    [
        ({"a": 1}, {"a": 1, "b": {"c": [1, 2]}}),
        ({"a": 1, "b": 2}, {"b": 3}),
        ({"l": [1, 2, 3]}, {"l": [1, 2]}),
        ({"l": [{"x": 1}, {"y": 2}]}, {"l": [{"x": 1}, {"y": 3, "z": None}]}),
        ({"a/b~c": 1}, {"a/b~c": 2}),
        ({"n": 1}, {"n": 1.0}),
        ({"n": 1}, {"n": True}),
        ({"m": {}}, {"m": None}),
    ],
)
def test_json_patch_round_trips(a: dict, b: dict) -> None:
    ops = json_patch(a, b)
    assert ops
    result = apply_patch(a, ops)
    assert result == b
    assert json.dumps(result, sort_keys=True) == json.dumps(b, sort_keys=True)
