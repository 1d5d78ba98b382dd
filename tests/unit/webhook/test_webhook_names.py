"""Webhook names in the generated configurations: unique per configuration, and settable.

The API server refuses a configuration whose webhooks share a name (k8s.io/kubernetes
pkg/apis/admissionregistration/validation/validation.go: ``field.Duplicate`` on
``webhooks[i].name``) and a name that is not a domain of at least three segments (the same file,
with apimachinery's ``IsFullyQualifiedName``); tests/integration/webhook/
test_webhook_names_apiserver.py asks the real one. kubebuilder's scaffold names a webhook
``v<kind>-<version>.kb.io``, so two validating webhooks for one kind and version (one for
create/update, one for delete) need the ``name=`` a ``+kubebuilder:webhook`` marker has
(controller-tools pkg/webhook/parser.go).
"""

from __future__ import annotations

from typing import Any

import pytest

from kubectrl.webhook import ValidatingHandler, WebhookServer, webhook_configurations

FOO = ("example.com/v1", "Foo")


class Check:
    def validate_create(self, obj: dict[str, Any]) -> None: ...

    def validate_update(self, old: dict[str, Any], new: dict[str, Any]) -> None: ...

    def validate_delete(self, obj: dict[str, Any]) -> None: ...


def two_validators(delete_name: str = "") -> WebhookServer:
    server = WebhookServer()
    server.register("/validate-foo", ValidatingHandler(FOO, Check()))
    server.register(
        "/validate-foo-delete",
        ValidatingHandler(FOO, Check(), delete=True),
        operations=("DELETE",),
        name=delete_name,
    )
    return server


def configure(server: WebhookServer) -> list[dict[str, Any]]:
    return webhook_configurations(server, service_name="foo", service_namespace="foo-system")


def test_two_webhooks_of_one_kind_and_version_with_one_name_are_refused_naming_both() -> None:
    with pytest.raises(ValueError, match="duplicate webhook names") as caught:
        configure(two_validators())
    message = str(caught.value)
    assert "'vfoo-v1.kb.io'" in message, message
    assert "at /validate-foo and /validate-foo-delete" in message, message
    assert "name=" in message, message


def test_a_registration_names_its_webhook() -> None:
    [validating] = configure(two_validators(delete_name="vfoo-delete.example.com"))
    assert [(w["name"], w["rules"][0]["operations"]) for w in validating["webhooks"]] == [
        ("vfoo-v1.kb.io", ["CREATE", "UPDATE"]),
        ("vfoo-delete.example.com", ["DELETE"]),
    ]


@pytest.mark.parametrize("bad", ["foo", "foo.example", "Foo.example.com", "a..b.c", "-a.b.c"])
def test_a_name_the_api_server_refuses_is_refused_at_registration(bad: str) -> None:
    with pytest.raises(ValueError, match="at least three labels") as caught:
        two_validators(delete_name=bad)
    assert repr(bad) in str(caught.value)
    assert "/validate-foo-delete" in str(caught.value)
