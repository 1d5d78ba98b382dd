"""The Foo webhooks: a defaulter, a validator and the v1alpha1 <-> v1beta1 conversion.

kubebuilder's ``foo_webhook.go`` (``CustomDefaulter`` / ``CustomValidator`` registered with
``ctrl.NewWebhookManagedBy(mgr).For(&Foo{})``), here :class:`FooDefaulter` and
:class:`FooValidator` registered by :func:`register` with a ``WebhookBuilder`` on the manager,
which serves them over HTTPS (``main.py --enable-webhooks``):

- ``/mutate-samplecontroller-k8s-io-v1alpha1-foo``: ``spec.replicas`` is 1 when left out;
- ``/validate-samplecontroller-k8s-io-v1alpha1-foo``: ``spec.deploymentName`` is required and
  a DNS-1123 label, ``spec.replicas`` is in 1..10, and ``spec.deploymentName`` cannot change;
- ``/convert``: ``FooV1beta1.to_hub`` / ``from_hub`` (``api.py``), for the API server.

The webhooks see every Foo as ``v1alpha1`` whatever version a client used: their configurations
list ``v1alpha1`` and the API server converts (``matchPolicy: Equivalent``).

``artifacts/webhooks.yaml``, the in-cluster ``MutatingWebhookConfiguration`` and
``ValidatingWebhookConfiguration``, is generated from these registrations; to regenerate it,
from the repository root::

    python examples/sample_controller/webhooks.py

Example::

    >>> from api import Foo
    >>> from kubectrl.webhook import Denied
    >>> foo = Foo.model_validate({"metadata": {"name": "a"}, "spec": {"deploymentName": "web"}})
    >>> FooDefaulter().default(foo)
    >>> foo.spec.replicas
    1
    >>> FooValidator().validate_create(foo)
    >>> foo.spec.deployment_name = "Web_1"
    >>> try:
    ...     FooValidator().validate_create(foo)
    ... except Denied as err:
    ...     print(err.code, err.message[:72])
    422 Foo.samplecontroller.k8s.io "a" is invalid: spec.deploymentName: Invalid
"""

from __future__ import annotations

import re
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from api import CERTIFICATE, NAMESPACE, WEBHOOK_SERVICE, Foo, FooSpec, FooV1beta1

from kubectrl.webhook import Denied, WebhookRegistration, webhook_configurations

if TYPE_CHECKING:
    from kubectrl.runtime import Manager

__all__ = [
    "WEBHOOKS_PATH",
    "FooDefaulter",
    "FooValidator",
    "configurations",
    "register",
    "webhooks_yaml",
]

#: Where the generated webhook configurations are committed.
WEBHOOKS_PATH = Path(__file__).resolve().parent / "artifacts" / "webhooks.yaml"

#: Prefix of the configurations' names (kustomize's ``namePrefix`` in a kubebuilder project).
NAME_PREFIX = "sample-controller"

_DNS1123_LABEL = "[a-z0-9]([-a-z0-9]*[a-z0-9])?"
_DNS1123_LABEL_MAX = 63
MIN_REPLICAS, MAX_REPLICAS = 1, 10


class FooDefaulter:
    """Sets ``spec.replicas`` to 1 when a Foo leaves it out (on create and update)."""

    def default(self, foo: Foo) -> None:
        """Fill in the defaults, in place."""
        if foo.spec is None:
            foo.spec = FooSpec()
        if foo.spec.replicas is None:
            foo.spec.replicas = 1


def _dns1123_label_errors(path: str, value: str) -> list[str]:
    """apimachinery's ``IsDNS1123Label``, worded as its field errors are."""
    errors = []
    if len(value) > _DNS1123_LABEL_MAX:
        errors.append(
            f'{path}: Invalid value: "{value}": must be no more than {_DNS1123_LABEL_MAX} '
            "characters"
        )
    if not re.fullmatch(_DNS1123_LABEL, value):
        errors.append(
            f'{path}: Invalid value: "{value}": a lowercase RFC 1123 label must consist of lower '
            "case alphanumeric characters or '-', and must start and end with an alphanumeric "
            f"character (e.g. 'my-name', or '123-abc', regex used for validation is "
            f"'{_DNS1123_LABEL}')"
        )
    return errors


class FooValidator:
    """Refuses Foos the controller cannot serve, as ``apierrors.NewInvalid`` words it (422).

    Every rule broken is listed, each as ``<field>: <problem>``; no warnings. Deletes are not
    validated (the configuration does not list DELETE).
    """

    def validate_create(self, foo: Foo) -> list[str] | None:
        """A new Foo: a valid ``deploymentName`` and ``replicas`` in 1..10 (when given)."""
        self._check(foo, self._errors(foo))
        return None

    def validate_update(self, old: Foo, new: Foo) -> list[str] | None:
        """A change: the rules of a new Foo, and ``deploymentName`` never changes once set."""
        errors = self._errors(new)
        before = old.spec.deployment_name if old.spec else None
        after = new.spec.deployment_name if new.spec else None
        if before and after != before:
            errors.append(
                f'spec.deploymentName: Invalid value: "{after or ""}": field is immutable'
            )
        self._check(new, errors)
        return None

    def validate_delete(self, foo: Foo) -> list[str] | None:
        """Deleting is always allowed."""
        return None

    @staticmethod
    def _errors(foo: Foo) -> list[str]:
        spec = foo.spec or FooSpec()
        errors = []
        if not spec.deployment_name:
            errors.append("spec.deploymentName: Required value")
        else:
            errors += _dns1123_label_errors("spec.deploymentName", spec.deployment_name)
        if spec.replicas is not None and not MIN_REPLICAS <= spec.replicas <= MAX_REPLICAS:
            errors.append(
                f"spec.replicas: Invalid value: {spec.replicas}: must be between "
                f"{MIN_REPLICAS} and {MAX_REPLICAS}, inclusive"
            )
        return errors

    @staticmethod
    def _check(foo: Foo, errors: list[str]) -> None:
        if not errors:
            return
        name = foo.metadata.name or foo.metadata.generate_name or ""
        detail = errors[0] if len(errors) == 1 else f"[{', '.join(errors)}]"
        raise Denied(f'Foo.samplecontroller.k8s.io "{name}" is invalid: {detail}', code=422)


def register(manager: Manager) -> list[WebhookRegistration]:
    """Serve the Foo defaulter, validator and conversion on ``manager``'s webhook server."""
    from kubectrl.runtime import WebhookBuilder

    return (
        WebhookBuilder(manager)
        .for_(Foo)
        .with_defaulter(FooDefaulter())
        .with_validator(FooValidator())
        .with_conversion(FooV1beta1)
        .complete()
    )


def configurations(manager: Manager | None = None) -> list[dict[str, Any]]:
    """The in-cluster webhook configurations of :func:`register`'s webhooks.

    They call the Service ``sample-controller-webhook-service`` (``artifacts/deployment.yaml``)
    and carry cert-manager's ``inject-ca-from`` annotation naming the serving Certificate, as
    kubebuilder's ``config/webhook`` + ``config/certmanager`` make them.

    Example::

        >>> for config in configurations():
        ...     print(config["kind"], config["metadata"]["name"])
        MutatingWebhookConfiguration sample-controller-mutating-webhook-configuration
        ValidatingWebhookConfiguration sample-controller-validating-webhook-configuration
    """
    if manager is None:
        from kubectrl.client import ClientConfig
        from kubectrl.runtime import Manager, ManagerOptions

        # Only registrations are needed: a manager that never connects anywhere.
        manager = Manager(
            ClientConfig(server="https://manifests.invalid"),
            options=ManagerOptions(metrics_bind_address="0"),
        )
        register(manager)
    return webhook_configurations(
        manager,
        name_prefix=NAME_PREFIX,
        service_name=WEBHOOK_SERVICE,
        service_namespace=NAMESPACE,
        cert_manager_certificate=CERTIFICATE,
    )


def webhooks_yaml() -> str:
    """The text ``artifacts/webhooks.yaml`` must hold, byte for byte."""
    import yaml

    header = (
        "# Generated from examples/sample_controller/webhooks.py by\n"
        "#   python examples/sample_controller/webhooks.py\n"
        "# (tests/unit/examples/test_sample_webhooks.py checks it is up to date).\n"
    )
    return header + yaml.safe_dump_all(
        configurations(), sort_keys=False, default_flow_style=False, width=100
    )


if __name__ == "__main__":
    WEBHOOKS_PATH.write_text(webhooks_yaml(), encoding="utf-8")
    sys.stdout.write(f"{WEBHOOKS_PATH}\n")
