"""What the real API server says about webhook names, for the checks webhook_configurations and
WebhookServer.register make (tests/unit/webhook/test_webhook_names.py).

k8s.io/kubernetes pkg/apis/admissionregistration/validation/validation.go refuses a configuration
whose webhooks share a name (``field.Duplicate`` on ``webhooks[1].name``) and a name with fewer
than three segments (apimachinery's ``IsFullyQualifiedName``). Every request is a dry run.
"""

from __future__ import annotations

import copy
from typing import Any

import pytest

from kubectrl.envtest import ControlPlane
from kubectrl.webhook import ValidatingHandler, WebhookServer, webhook_configurations

pytestmark = pytest.mark.integration

PATH = "/apis/admissionregistration.k8s.io/v1/validatingwebhookconfigurations?dryRun=All"
FOO = ("example.com/v1", "Foo")


class Check:
    def validate_create(self, obj: dict[str, Any]) -> None: ...

    def validate_update(self, old: dict[str, Any], new: dict[str, Any]) -> None: ...

    def validate_delete(self, obj: dict[str, Any]) -> None: ...


def named_configuration() -> dict[str, Any]:
    server = WebhookServer()
    server.register("/validate-foo", ValidatingHandler(FOO, Check()))
    server.register(
        "/validate-foo-delete",
        ValidatingHandler(FOO, Check(), delete=True),
        operations=("DELETE",),
        name="vfoo-delete.example.com",
    )
    [validating] = webhook_configurations(
        server, name_prefix="names", service_name="foo", service_namespace="foo-system"
    )
    return validating


def post(control_plane: ControlPlane, body: dict[str, Any]) -> tuple[int, str]:
    with control_plane.http_client() as http:
        response = http.post(PATH, json=body)
    return response.status_code, str(response.json().get("message", ""))


def test_the_configuration_with_a_named_second_webhook_is_accepted(
    control_plane: ControlPlane,
) -> None:
    status, message = post(control_plane, named_configuration())
    assert status == 201, message


def test_two_webhooks_with_one_name_are_refused(control_plane: ControlPlane) -> None:
    # What webhook_configurations wrote before it refused duplicates: both named vfoo-v1.kb.io.
    body = copy.deepcopy(named_configuration())
    body["webhooks"][1]["name"] = body["webhooks"][0]["name"]
    status, message = post(control_plane, body)
    assert status == 422, message
    assert 'webhooks[1].name: Duplicate value: "vfoo-v1.kb.io"' in message, message


@pytest.mark.parametrize("bad", ["foo.example", "Foo.example.com"])
def test_a_name_register_refuses_is_refused_by_the_server(
    control_plane: ControlPlane, bad: str
) -> None:
    body = copy.deepcopy(named_configuration())
    body["webhooks"][1]["name"] = bad
    status, message = post(control_plane, body)
    assert status == 422, message
    assert "webhooks[1].name" in message, message
