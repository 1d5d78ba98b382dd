"""The WebhookBuilder: register a kind's webhooks on the manager (``builder.WebhookBuilder``).

::

    WebhookBuilder(manager).for_(Foo).with_defaulter(FooDefaulter()).with_validator(
        FooValidator()
    ).with_conversion(FooV1beta1).complete()

Paths are controller-runtime's (``pkg/builder/webhook.go``): ``/mutate-<group with dots as
dashes>-<version>-<kind lower-cased>``, ``/validate-...`` and ``/convert`` (one conversion
path for every kind).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Generic, TypeVar

from kubectrl._internal.kinds import resolve_kind
from kubectrl.webhook import (
    Defaulter,
    DefaultingHandler,
    KindLike,
    ValidatingHandler,
    Validator,
    WebhookRegistration,
)

if TYPE_CHECKING:
    from kubectrl.runtime._manager import Manager

__all__ = ["WebhookBuilder", "webhook_path"]

T = TypeVar("T")


def webhook_path(prefix: str, kind: KindLike) -> str:
    """controller-runtime's generated path: ``/<prefix>-<group>-<version>-<kind>``.

    Example::

        >>> webhook_path("mutate", ("samplecontroller.k8s.io/v1alpha1", "Foo"))
        '/mutate-samplecontroller-k8s-io-v1alpha1-foo'
        >>> webhook_path("validate", ("apps/v1", "Deployment"))
        '/validate-apps-v1-deployment'
        >>> webhook_path("validate", ("v1", "ConfigMap"))
        '/validate--v1-configmap'
    """
    info, _ = resolve_kind(kind)
    return f"/{prefix}-{info.group.replace('.', '-')}-{info.version}-{info.kind.lower()}"


class WebhookBuilder(Generic[T]):
    """Registers a defaulter, a validator and conversion for one kind on a manager.

    - ``for_(kind)``: a model class (typed objects) or an ``(apiVersion, kind)`` tuple (dicts);
      with conversion, the hub (storage) version's model. Any version may have its own
      defaulter and validator (a spoke too): a builder of its own, ``for_`` that version's
      model; its paths and webhook rules name that version.
    - ``with_defaulter(d)``: a :class:`~kubectrl.webhook.Defaulter`, served at ``/mutate-...``.
    - ``with_validator(v, delete=False)``: a :class:`~kubectrl.webhook.Validator`, served at
      ``/validate-...``; ``delete=True`` lists DELETE in the configuration too.
    - ``with_conversion(*spokes)``: the other versions' models (each with ``to_hub`` /
      ``from_hub``), served at ``/convert``; its registration names the hub's group, kind,
      version and plural (the manifests give that kind's CRD ``strategy: Webhook``).
    - ``complete()`` registers them on ``manager.webhook_server`` and returns the registrations;
      the manager then starts the server.

    Example::

        >>> from kubectrl.client import ClientConfig
        >>> from kubectrl.runtime import Manager, ManagerOptions
        >>> manager = Manager(ClientConfig(server="https://example.invalid"),
        ...                   options=ManagerOptions(metrics_bind_address="0"))
        >>> class Default:
        ...     def default(self, obj: dict) -> None:
        ...         obj.setdefault("spec", {}).setdefault("replicas", 1)
        >>> regs = WebhookBuilder(manager).for_(("example.com/v1", "Foo")).with_defaulter(
        ...     Default()).complete()
        >>> [(r.path, r.type) for r in regs]
        [('/mutate-example-com-v1-foo', 'mutating')]
    """

    def __init__(self, manager: Manager) -> None:
        self._manager = manager
        self._kind: KindLike | None = None
        self._defaulter: Defaulter[T] | None = None
        self._validator: Validator[T] | None = None
        self._validate_delete = False
        self._spokes: tuple[type[Any], ...] = ()
        self._conversion = False

    def for_(self, kind: KindLike) -> WebhookBuilder[T]:
        """The kind the webhooks serve (exactly once)."""
        if self._kind is not None:
            raise ValueError("for_() was already called; one kind per WebhookBuilder")
        resolve_kind(kind)  # a TypeError naming the class now rather than at complete()
        self._kind = kind
        return self

    def with_defaulter(self, defaulter: Defaulter[T]) -> WebhookBuilder[T]:
        """Serve a mutating webhook calling ``defaulter.default``."""
        self._defaulter = defaulter
        return self

    def with_validator(self, validator: Validator[T], *, delete: bool = False) -> WebhookBuilder[T]:
        """Serve a validating webhook calling ``validator``'s methods."""
        self._validator = validator
        self._validate_delete = delete
        return self

    def with_conversion(self, *spokes: type[Any]) -> WebhookBuilder[T]:
        """Convert between the ``for_`` model (the hub) and ``spokes`` at ``/convert``."""
        self._spokes = spokes
        self._conversion = True
        return self

    def complete(self) -> list[WebhookRegistration]:
        """Register on ``manager.webhook_server``; the registrations made (conversion last)."""
        kind = self._kind
        if kind is None:
            raise ValueError("WebhookBuilder needs for_(kind) before complete()")
        if self._defaulter is None and self._validator is None and not self._conversion:
            raise ValueError(
                f"WebhookBuilder for {kind!r}: nothing to register; call with_defaulter, "
                "with_validator or with_conversion"
            )
        server = self._manager.webhook_server
        made: list[WebhookRegistration] = []
        if self._defaulter is not None:
            handler: DefaultingHandler[T] = DefaultingHandler(kind, self._defaulter)
            made.append(server.register(webhook_path("mutate", kind), handler))
        if self._validator is not None:
            validating: ValidatingHandler[T] = ValidatingHandler(
                kind, self._validator, delete=self._validate_delete
            )
            made.append(server.register(webhook_path("validate", kind), validating))
        if self._conversion:
            _, model = resolve_kind(kind)
            if model is None:
                raise TypeError(
                    f"with_conversion needs for_() given the hub's model class, not {kind!r}"
                )
            server.conversion_handler("/convert").add(model, *self._spokes)
            hub = resolve_kind(model)[0]
            made.extend(
                r
                for r in server.registrations
                if r.path == "/convert" and (r.group, r.kind) == (hub.group, hub.kind)
            )
        return made
