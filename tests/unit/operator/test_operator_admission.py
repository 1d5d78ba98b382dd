"""Admission handlers on the operator (kopf's ``@kopf.on.validate``/``@kopf.on.mutate``),
served by the manager's webhook server.

Upstream: kopf's ``kopf/_core/engines/admission.py`` (every matching handler is called; an
``AdmissionError`` refuses with its code, any other exception with 500; mutating handlers fill
``patch``, answered as a JSON patch; ``operation`` and ``subresource`` filters, only the main
resource unless ``subresource='*'``) and ``docs/admission.rst``.
"""

from __future__ import annotations

from typing import Any

import pytest

from kubectrl._internal.clock import FakeClock
from kubectrl.operator import Operator
from kubectrl.testing import FakeAPI
from kubectrl.webhook import AdmissionRequest, Denied

from .conftest import CM, new_manager


def request(operation: str = "CREATE", **data: str) -> AdmissionRequest:
    obj = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "a"}, "data": data}
    return AdmissionRequest.from_dict(
        {
            "uid": "1",
            "operation": operation,
            "kind": {"group": "", "version": "v1", "kind": "ConfigMap"},
            "resource": {"group": "", "version": "v1", "resource": "configmaps"},
            "object": None if operation == "DELETE" else obj,
            "oldObject": obj if operation != "CREATE" else None,
        }
    )


def served(operator: Operator, kind: str) -> Any:
    (handler,) = [
        r.handler for r in operator.manager.webhook_server.registrations if r.type == kind
    ]
    return handler


async def test_handlers_registered_after_attach_are_served_and_filtered_by_operation(
    api: FakeAPI, clock: FakeClock
) -> None:
    operator = Operator(new_manager(api, clock))
    calls: list[tuple[str, str]] = []

    @operator.on_validate(CM, operations=["DELETE"])
    def no_deletes(name: str, operation: str, old: Any, new: Any, **_: Any) -> None:
        calls.append((operation, name))
        assert new is None
        assert old["metadata"]["name"] == name
        raise Denied("keep it", code=422)

    @operator.on_mutate(CM)
    def mark(patch: dict[str, Any], **_: Any) -> None:
        patch["metadata"] = {"labels": {"seen": "yes"}}

    @operator.on_mutate(CM, when=lambda body, **_: "never" in body["data"])
    def never(patch: dict[str, Any], **_: Any) -> None:
        patch["data"] = {"never": "1"}

    validate, mutate = served(operator, "validating"), served(operator, "mutating")
    assert (await validate.handle(request("CREATE"))).is_allowed
    denied = await validate.handle(request("DELETE"))
    assert (denied.is_allowed, denied.code, denied.reason) == (False, 422, "Invalid")
    assert calls == [("DELETE", "a")]
    patched = await mutate.handle(request(x="1"))
    assert patched.patch == [{"op": "add", "path": "/metadata/labels", "value": {"seen": "yes"}}]


async def test_an_unexpected_exception_refuses_with_500_naming_it(
    api: FakeAPI, clock: FakeClock, caplog: pytest.LogCaptureFixture
) -> None:
    operator = Operator(new_manager(api, clock))

    @operator.on_validate(CM)
    async def broken(**_: Any) -> None:
        raise KeyError("field")

    answer = await served(operator, "validating").handle(request())
    assert (answer.is_allowed, answer.code, answer.message) == (False, 500, "KeyError: 'field'")
    assert "admission handler" in caplog.text
    assert "broken" in caplog.text


def test_bad_registrations_are_refused_naming_what_is_wrong() -> None:
    operator = Operator()
    with pytest.raises(ValueError, match="operations must be some of CREATE"):
        operator.on_validate(CM, operations=["PATCH"])
    with pytest.raises(TypeError, match="not the string 'CREATE'"):
        operator.on_validate(CM, operations="CREATE")

    @operator.on_validate(CM, id="check")
    def check(**_: Any) -> None: ...

    with pytest.raises(ValueError, match="'check' is registered"):
        operator.on_validate(CM, id="check")(check)
