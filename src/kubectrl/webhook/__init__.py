"""Admission and conversion webhooks (controller-runtime's ``pkg/webhook``).

- :class:`WebhookServer`: HTTPS (TLS 1.2+), certificate files reloaded when they change; the
  :class:`~kubectrl.runtime.Manager` runs one (``manager.webhook_server``) when something is
  registered.
- Admission: a :class:`Defaulter` (mutating; the server answers with the JSON patch) and a
  :class:`Validator` of one kind, typed (a model class) or dicts (an ``(apiVersion, kind)``
  tuple), sync or async, wrapped by :class:`DefaultingHandler` / :class:`ValidatingHandler`; or
  a low-level :class:`AdmissionHandler` for any kind.
- Conversion: hub and spoke (:class:`Convertible`), served by a :class:`ConversionHandler` at
  ``/convert``.
- Manifests: :func:`webhook_configurations` and the CRD's :func:`conversion_stanza`.

Most programs register through :class:`kubectrl.runtime.WebhookBuilder`::

    WebhookBuilder(manager).for_(Foo).with_defaulter(FooDefaulter()).with_validator(
        FooValidator()
    ).with_conversion(FooV1beta1).complete()

Importing this package does not import aiohttp (only :meth:`WebhookServer.start` does).
"""

from __future__ import annotations

from kubectrl._internal.exports import publish as _publish
from kubectrl.webhook._admission import (
    AdmissionHandler,
    AdmissionRequest,
    AdmissionResponse,
    Defaulter,
    DefaultingHandler,
    Denied,
    KindLike,
    ValidatingHandler,
    Validator,
    Warnings,
)
from kubectrl.webhook._conversion import ConversionError, ConversionHandler, Convertible
from kubectrl.webhook._manifests import conversion_stanza, webhook_configurations
from kubectrl.webhook._server import (
    PROBE_PATH,
    WebhookRegistration,
    WebhookServer,
    WebhookServerOptions,
    WebhookType,
)

__all__ = [
    "PROBE_PATH",
    "AdmissionHandler",
    "AdmissionRequest",
    "AdmissionResponse",
    "ConversionError",
    "ConversionHandler",
    "Convertible",
    "Defaulter",
    "DefaultingHandler",
    "Denied",
    "KindLike",
    "ValidatingHandler",
    "Validator",
    "Warnings",
    "WebhookRegistration",
    "WebhookServer",
    "WebhookServerOptions",
    "WebhookType",
    "conversion_stanza",
    "webhook_configurations",
]

_publish(__name__, globals(), __all__)
