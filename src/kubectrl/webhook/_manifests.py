"""Webhook manifests from what is registered, shaped as controller-gen writes them.

controller-tools' ``pkg/webhook/parser.go`` turns ``+kubebuilder:webhook`` markers into one
``MutatingWebhookConfiguration`` and one ``ValidatingWebhookConfiguration`` (named
``mutating-webhook-configuration`` / ``validating-webhook-configuration``, with kustomize's name
prefix in a kubebuilder project); kubebuilder's scaffold names each webhook
``m<kind>-<version>.kb.io`` / ``v<kind>-<version>.kb.io`` and lists ``create;update``.
"""

from __future__ import annotations

import base64
from typing import Any, Protocol

from kubectrl.webhook._server import WebhookServer

__all__ = ["conversion_stanza", "webhook_configurations"]


class _HasWebhookServer(Protocol):
    @property
    def webhook_server(self) -> WebhookServer: ...


def _client_config(
    service_name: str, service_namespace: str, path: str, base_url: str, ca_bundle: bytes | None
) -> dict[str, Any]:
    if bool(base_url) == bool(service_name and service_namespace):
        raise ValueError(
            "give either service_name and service_namespace (in-cluster) or a base URL "
            "(a server outside the cluster, e.g. https://127.0.0.1:9443)"
        )
    config: dict[str, Any]
    if base_url:
        config = {"url": base_url.rstrip("/") + path}
    else:
        config = {
            "service": {
                "name": service_name,
                "namespace": service_namespace,
                "path": path,
                "port": 443,
            }
        }
    if ca_bundle is not None:
        config["caBundle"] = base64.b64encode(ca_bundle).decode("ascii")
    return config


def webhook_configurations(
    source: WebhookServer | _HasWebhookServer,
    *,
    name_prefix: str = "",
    service_name: str = "",
    service_namespace: str = "",
    base_url: str = "",
    ca_bundle: bytes | None = None,
    cert_manager_certificate: str | None = None,
    timeout_seconds: int = 10,
) -> list[dict[str, Any]]:
    """The admission webhook configurations for every mutating and validating registration.

    ``source`` is a :class:`~kubectrl.webhook.WebhookServer` or a Manager (its
    ``webhook_server``). Each webhook calls ``service_name`` in ``service_namespace`` on port
    443 at its path, for its kind's group, version, plural and operations, with
    ``sideEffects: None``, ``failurePolicy: Fail``, ``admissionReviewVersions: [v1]`` and
    ``timeoutSeconds``. ``cert_manager_certificate`` (``name`` or ``namespace/name``) adds the
    ``cert-manager.io/inject-ca-from`` annotation (cert-manager then fills the CA bundle).
    For a server outside the cluster (a local run, envtest) give ``base_url`` instead of the
    service (``clientConfig.url`` is ``base_url`` + the path) and the CA's PEM as
    ``ca_bundle``.
    A configuration with no webhook is left out; registrations without a kind are skipped.
    Each webhook is named by its registration's ``name`` (``register(..., name=...)``), else
    kubebuilder's ``m<kind>-<version>.kb.io`` / ``v<kind>-<version>.kb.io``; two webhooks of
    one configuration with the same name raise ``ValueError`` naming both paths (the API
    server refuses such a configuration: 422 ``Duplicate value``).

    Example::

        >>> from kubectrl.webhook import WebhookServer, DefaultingHandler
        >>> class Default:
        ...     def default(self, obj: dict) -> None: ...
        >>> server = WebhookServer()
        >>> _ = server.register("/mutate-example-com-v1-foo",
        ...                     DefaultingHandler(("example.com/v1", "Foo"), Default()))
        >>> [config] = webhook_configurations(server, name_prefix="foo-",
        ...     service_name="foo-webhook", service_namespace="foo-system")
        >>> config["metadata"]["name"], config["webhooks"][0]["name"]
        ('foo-mutating-webhook-configuration', 'mfoo-v1.kb.io')
        >>> rule = config["webhooks"][0]["rules"][0]
        >>> rule["apiGroups"], rule["resources"], rule["operations"]
        (['example.com'], ['foos'], ['CREATE', 'UPDATE'])
    """
    server = source if isinstance(source, WebhookServer) else source.webhook_server
    if name_prefix and not name_prefix.endswith("-"):
        name_prefix += "-"
    annotations: dict[str, str] = {}
    if cert_manager_certificate:
        ref = cert_manager_certificate
        if "/" not in ref:
            ref = f"{service_namespace}/{ref}"
        annotations["cert-manager.io/inject-ca-from"] = ref
    out: list[dict[str, Any]] = []
    for type_, kind, letter in (
        ("mutating", "MutatingWebhookConfiguration", "m"),
        ("validating", "ValidatingWebhookConfiguration", "v"),
    ):
        webhooks = []
        named: dict[str, str] = {}
        for reg in server.registrations:
            if reg.type != type_ or not reg.kind or not reg.operations:
                continue
            name = reg.name or f"{letter}{reg.kind.lower()}-{reg.version}.kb.io"
            if name in named:
                raise ValueError(
                    f"two {type_} webhooks are named {name!r} (at {named[name]} and {reg.path}); "
                    "the API server refuses a configuration with duplicate webhook names: give "
                    f"one a name of its own, e.g. server.register({reg.path!r}, ..., "
                    f"name='{letter}{reg.kind.lower()}-<purpose>.example.com')"
                )
            named[name] = reg.path
            webhooks.append(
                {
                    "admissionReviewVersions": ["v1"],
                    "clientConfig": _client_config(
                        service_name, service_namespace, reg.path, base_url, ca_bundle
                    ),
                    "failurePolicy": "Fail",
                    "name": name,
                    "rules": [
                        {
                            "apiGroups": [reg.group],
                            "apiVersions": [reg.version],
                            "operations": list(reg.operations),
                            "resources": [reg.plural],
                        }
                    ],
                    "sideEffects": "None",
                    "timeoutSeconds": timeout_seconds,
                }
            )
        if not webhooks:
            continue
        metadata: dict[str, Any] = {"name": f"{name_prefix}{type_}-webhook-configuration"}
        if annotations:
            metadata["annotations"] = dict(annotations)
        out.append(
            {
                "apiVersion": "admissionregistration.k8s.io/v1",
                "kind": kind,
                "metadata": metadata,
                "webhooks": webhooks,
            }
        )
    return out


def conversion_stanza(
    *,
    service_name: str = "",
    service_namespace: str = "",
    path: str = "/convert",
    ca_bundle: bytes | None = None,
    url: str = "",
) -> dict[str, Any]:
    """A CRD's ``spec.conversion`` calling the webhook service (``strategy: Webhook``).

    ``ca_bundle`` is the PEM of the CA that signed the serving certificate (base64-encoded
    here); leave it out when cert-manager's CA injector fills it. ``url`` (the full URL, e.g.
    ``https://127.0.0.1:9443/convert``) replaces the service for a server outside the
    cluster; ``path`` is then ignored. Pass the result to
    :func:`kubectrl.crd.generate` as ``conversion=``.

    Example::

        >>> stanza = conversion_stanza(service_name="foo-webhook", service_namespace="foo-system")
        >>> stanza["strategy"], stanza["webhook"]["clientConfig"]["service"]["path"]
        ('Webhook', '/convert')
    """
    client_config = _client_config(
        service_name, service_namespace, "" if url else path, url, ca_bundle
    )
    return {
        "strategy": "Webhook",
        "webhook": {"clientConfig": client_config, "conversionReviewVersions": ["v1"]},
    }
