"""Admission: ``AdmissionReview`` v1 requests and responses, defaulters and validators.

controller-runtime's ``pkg/webhook/admission``: a low-level :class:`AdmissionHandler` answers an
:class:`AdmissionRequest` with an :class:`AdmissionResponse`; :class:`DefaultingHandler` and
:class:`ValidatingHandler` adapt a typed :class:`Defaulter` / :class:`Validator` of one kind
(``CustomDefaulter`` / ``CustomValidator``).
"""

from __future__ import annotations

import asyncio
import base64
import copy
import dataclasses
import inspect
import logging
from collections.abc import Awaitable, Callable, Mapping
from typing import Any, Generic, Protocol, TypeAlias, TypeVar, runtime_checkable

from kubectrl import errors as _errors
from kubectrl import kinds as _kinds
from kubectrl import objects as _objects
from kubectrl._internal.kinds import resolve_kind
from kubectrl.webhook._jsonpatch import json_patch

__all__ = [
    "AdmissionHandler",
    "AdmissionRequest",
    "AdmissionResponse",
    "Defaulter",
    "DefaultingHandler",
    "Denied",
    "KindLike",
    "ValidatingHandler",
    "Validator",
    "Warnings",
]

log = logging.getLogger("kubectrl.webhook")

T = TypeVar("T")
T_contra = TypeVar("T_contra", contravariant=True)

#: What a validator returns: warnings shown to the client (``kubectl`` prints them), or ``None``.
Warnings: TypeAlias = "list[str] | None"

#: A kind a typed webhook serves: a model class (a :class:`~kubectrl.resources.CustomResource`
#: subclass or a ``kubernetes.client.models`` class), or an ``(apiVersion, kind)`` tuple, in which
#: case the defaulter and validator get plain dicts.
KindLike: TypeAlias = "type[Any] | tuple[str, str]"


class Denied(Exception):  # noqa: N818 - the name says what it means to a validator's author
    """Raised by a validator (or defaulter) to refuse the object with ``message``.

    The response is ``allowed: false`` with ``code`` (403 by default) and the message, which
    ``kubectl`` shows as ``admission webhook "..." denied the request: <message>``. ``warnings``
    are sent along. A ``ValueError`` (pydantic's ``ValidationError`` is one) is taken the same way.

    Example::

        >>> err = Denied("spec.replicas must be between 1 and 10")
        >>> err.code, str(err)
        (403, 'spec.replicas must be between 1 and 10')
    """

    def __init__(self, message: str, *, code: int = 403, warnings: Warnings = None) -> None:
        super().__init__(message)
        self.message = message
        self.code = code
        self.warnings = list(warnings or [])


@dataclasses.dataclass(frozen=True)
class AdmissionRequest:
    """One ``AdmissionReview`` v1 request (``admission/v1`` ``AdmissionRequest``).

    ``object`` is the new object (``None`` on DELETE), ``old_object`` the stored one (UPDATE and
    DELETE); both are the JSON dicts the API server sent. ``raw`` is the request as received.

    Example::

        >>> req = AdmissionRequest.from_dict({
        ...     "uid": "1", "operation": "CREATE", "name": "a", "namespace": "ns",
        ...     "kind": {"group": "", "version": "v1", "kind": "ConfigMap"},
        ...     "resource": {"group": "", "version": "v1", "resource": "configmaps"},
        ...     "object": {"apiVersion": "v1", "kind": "ConfigMap"}})
        >>> req.kind.kind, req.resource.resource, req.dry_run
        ('ConfigMap', 'configmaps', False)
    """

    uid: str
    kind: _objects.GroupVersionKind
    resource: _objects.GroupVersionResource
    operation: str
    name: str = ""
    namespace: str = ""
    sub_resource: str = ""
    user_info: Mapping[str, Any] = dataclasses.field(default_factory=dict)
    object: dict[str, Any] | None = None
    old_object: dict[str, Any] | None = None
    dry_run: bool = False
    options: dict[str, Any] | None = None
    raw: Mapping[str, Any] = dataclasses.field(default_factory=dict, repr=False)

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> AdmissionRequest:
        """Read the ``request`` of an ``AdmissionReview``; ``ValueError`` naming what is wrong."""
        if not isinstance(data, Mapping):
            raise ValueError(f"request must be an object, got {type(data).__name__}")
        uid = data.get("uid")
        if not isinstance(uid, str) or not uid:
            raise ValueError("request.uid is missing")
        kind = data.get("kind") or {}
        resource = data.get("resource") or {}
        if not isinstance(kind, Mapping) or not isinstance(resource, Mapping):
            raise ValueError("request.kind and request.resource must be objects")
        obj = data.get("object")
        old = data.get("oldObject")
        for field, value in (("object", obj), ("oldObject", old)):
            if value is not None and not isinstance(value, dict):
                raise ValueError(f"request.{field} must be an object")
        options = data.get("options")
        return cls(
            uid=uid,
            kind=_objects.GroupVersionKind(
                str(kind.get("group", "")), str(kind.get("version", "")), str(kind.get("kind", ""))
            ),
            resource=_objects.GroupVersionResource(
                str(resource.get("group", "")),
                str(resource.get("version", "")),
                str(resource.get("resource", "")),
            ),
            operation=str(data.get("operation", "")),
            name=str(data.get("name") or ""),
            namespace=str(data.get("namespace") or ""),
            sub_resource=str(data.get("subResource") or ""),
            user_info=dict(data.get("userInfo") or {}),
            object=obj,
            old_object=old,
            dry_run=bool(data.get("dryRun", False)),
            options=options if isinstance(options, dict) else None,
            raw=data,
        )

    @property
    def object_name(self) -> str:
        """``namespace/name`` (or ``name``) of the object, for messages and logs."""
        name = self.name or _objects.metadata_of(self.object or self.old_object or {}).get(
            "name", ""
        )
        if not name:
            generate = _objects.metadata_of(self.object or {}).get("generateName", "")
            name = f"{generate}<generated>" if generate else "<unnamed>"
        return f"{self.namespace}/{name}" if self.namespace else str(name)


@dataclasses.dataclass
class AdmissionResponse:
    """The answer to an :class:`AdmissionRequest` (``admission/v1`` ``AdmissionResponse``).

    Build one with :meth:`allowed`, :meth:`denied`, :meth:`errored` or :meth:`patched`; the
    server fills ``uid`` from the request. ``patch`` is an RFC 6902 JSON patch (sent as
    ``patchType: JSONPatch``, base64-encoded).

    Example::

        >>> AdmissionResponse.denied("no").to_dict()["status"]
        {'code': 403, 'message': 'no', 'reason': 'Forbidden'}
        >>> r = AdmissionResponse.patched({"spec": {}}, {"spec": {"replicas": 1}})
        >>> r.patch, r.to_dict()["patchType"]
        ([{'op': 'add', 'path': '/spec/replicas', 'value': 1}], 'JSONPatch')
    """

    is_allowed: bool
    code: int = 200
    message: str = ""
    reason: str = ""
    warnings: list[str] = dataclasses.field(default_factory=list)
    patch: list[dict[str, Any]] | None = None
    uid: str = ""

    @classmethod
    def allowed(cls, message: str = "", *, warnings: Warnings = None) -> AdmissionResponse:
        """Admit as is (controller-runtime's ``Allowed``)."""
        return cls(True, 200, message, warnings=list(warnings or []))

    @classmethod
    def denied(
        cls, message: str, code: int = 403, *, warnings: Warnings = None
    ) -> AdmissionResponse:
        """Refuse with ``message`` (controller-runtime's ``Denied``: 403, reason Forbidden).

        Another ``code`` gets the API's reason for it (422 ``Invalid``, 400 ``BadRequest``,
        409 ``Conflict``...), so clients see the same error as for a built-in check.
        """
        reason = _REASONS.get(code, "")
        return cls(False, code, message, reason, warnings=list(warnings or []))

    @classmethod
    def errored(cls, code: int, message: str) -> AdmissionResponse:
        """Refuse because the webhook failed (controller-runtime's ``Errored``: 400, 500...)."""
        return cls(False, code, message)

    @classmethod
    def patched(
        cls,
        original: Mapping[str, Any],
        mutated: Mapping[str, Any],
        *,
        warnings: Warnings = None,
    ) -> AdmissionResponse:
        """Admit with the JSON patch from ``original`` to ``mutated`` (none when equal)."""
        ops = json_patch(original, mutated)
        return cls(True, 200, warnings=list(warnings or []), patch=ops or None)

    def to_dict(self) -> dict[str, Any]:
        """The ``response`` of the ``AdmissionReview`` sent back."""
        out: dict[str, Any] = {"uid": self.uid, "allowed": self.is_allowed}
        if not self.is_allowed or self.message:
            status: dict[str, Any] = {"code": self.code}
            if self.message:
                status["message"] = self.message
            if self.reason:
                status["reason"] = self.reason
            out["status"] = status
        if self.patch:
            raw = _json_bytes(self.patch)
            out["patch"] = base64.b64encode(raw).decode("ascii")
            out["patchType"] = "JSONPatch"
        if self.warnings:
            out["warnings"] = list(self.warnings)
        return out


#: metav1.StatusReason for the codes a webhook refuses with (apimachinery's StatusReason*).
_REASONS = {
    400: "BadRequest",
    401: "Unauthorized",
    403: "Forbidden",
    404: "NotFound",
    409: "Conflict",
    410: "Gone",
    422: "Invalid",
    429: "TooManyRequests",
}


def _json_bytes(value: Any) -> bytes:
    import json

    return json.dumps(value, separators=(",", ":")).encode()


@runtime_checkable
class AdmissionHandler(Protocol):
    """Answers admission requests for any kind (controller-runtime's ``admission.Handler``).

    Register one on a :class:`~kubectrl.webhook.WebhookServer` at a path of your choice.

    Example::

        class DenyAll:
            async def handle(self, req: AdmissionRequest) -> AdmissionResponse:
                return AdmissionResponse.denied(f"{req.operation} of {req.object_name} refused")
    """

    async def handle(self, req: AdmissionRequest) -> AdmissionResponse:
        """The response to ``req``."""
        ...


class Defaulter(Protocol[T_contra]):
    """Sets defaults on an object being created or updated (``admission.CustomDefaulter``).

    ``default`` changes the object in place (a model instance, or a dict for a tuple kind);
    it may be ``def`` or ``async def``. The server answers with the JSON patch of the changes.

    Example::

        class FooDefaulter:
            def default(self, foo: Foo) -> None:
                if foo.spec.replicas is None:
                    foo.spec.replicas = 1
    """

    def default(self, obj: T_contra, /) -> Awaitable[None] | None:
        """Set the defaults on ``obj`` in place."""
        ...


class Validator(Protocol[T_contra]):
    """Validates creates, updates and deletes of a kind (``admission.CustomValidator``).

    Each method returns warnings (or ``None``) to admit, and raises :class:`Denied` (or
    ``ValueError``) to refuse; any other exception is answered as a 500 error. ``def`` or
    ``async def``: a plain ``def`` runs in a worker thread (``asyncio.to_thread``) so a slow one
    does not stall the server; one that never returns keeps its thread (answered with a 500 once
    the server's ``handler_timeout`` passes), so prefer ``async def`` for anything that waits.

    Example::

        class FooValidator:
            def validate_create(self, foo: Foo) -> list[str] | None:
                if not foo.spec.deployment_name:
                    raise Denied("spec.deploymentName is required")
                return None
            def validate_update(self, old: Foo, new: Foo) -> list[str] | None:
                return self.validate_create(new)
            def validate_delete(self, foo: Foo) -> list[str] | None:
                return None
    """

    def validate_create(self, obj: T_contra, /) -> Warnings | Awaitable[Warnings]:
        """Check a new object."""
        ...

    def validate_update(self, old: T_contra, new: T_contra, /) -> Warnings | Awaitable[Warnings]:
        """Check a change from ``old`` to ``new``."""
        ...

    def validate_delete(self, obj: T_contra, /) -> Warnings | Awaitable[Warnings]:
        """Check the deletion of ``obj``."""
        ...


def _describe(impl: object) -> str:
    cls = impl if isinstance(impl, type) else type(impl)
    return f"{cls.__module__}.{cls.__qualname__}"


async def _call(func: Callable[..., Any], *args: Any) -> Any:
    """Await an ``async def`` method; run a plain one in a thread (it may block)."""
    if inspect.iscoroutinefunction(func):
        return await func(*args)
    result = await asyncio.to_thread(func, *args)
    if inspect.isawaitable(result):
        result = await result
    return result


def _log_failure(message: str, req: AdmissionRequest, **extra: Any) -> None:
    log.error(
        "%s (kind %s, object %s, uid %s)",
        message,
        req.kind.kind,
        req.object_name,
        req.uid,
        extra={"kind": req.kind.kind, "object": req.object_name, "uid": req.uid, **extra},
        exc_info=True,  # a bug in the defaulter or validator: its traceback says where
    )


def _undecodable(kind: str, req: AdmissionRequest, err: Exception) -> str:
    """What is wrong with an object that did not decode, naming it once."""
    if isinstance(err, _errors.ModelValidationError):
        return str(err)  # "Foo ns/x does not validate as Foo: spec.replicas: ..."
    return f"cannot decode {kind} {req.object_name}: {err}"


class _TypedHandler(Generic[T]):
    def __init__(self, kind: KindLike) -> None:
        self.kind_info, self.model = resolve_kind(kind)

    def _decode(self, req: AdmissionRequest, data: dict[str, Any]) -> Any:
        if self.model is None:
            return copy.deepcopy(data)
        return _kinds.from_dict(self.model, data)

    def _encode(self, obj: Any) -> dict[str, Any]:
        if self.model is None:
            return dict(obj)
        return _kinds.to_dict(obj)

    def _check_kind(self, req: AdmissionRequest) -> AdmissionResponse | None:
        info = self.kind_info
        if (req.kind.group, req.kind.kind) != (info.group, info.kind):
            message = (
                f"this webhook serves {info.group or 'core'}/{info.kind}, not "
                f"{req.kind.group or 'core'}/{req.kind.kind} ({req.object_name})"
            )
            return AdmissionResponse.errored(400, message)
        if info.version and req.kind.version and req.kind.version != info.version:
            # A webhook configuration whose rule lists another version than the handler's:
            # decoding that object into this version's model would misread it.
            message = (
                f"this webhook serves {info.api_version} {info.kind}, not version "
                f"{req.kind.version} ({req.object_name}); its webhook configuration must list "
                f"apiVersions [{info.version}] only"
            )
            return AdmissionResponse.errored(400, message)
        return None


class DefaultingHandler(_TypedHandler[T]):
    """The :class:`AdmissionHandler` of a :class:`Defaulter` for one kind (mutating).

    Decodes the object (into the model for a model kind), calls ``default``, and answers with
    the JSON patch between the object as decoded and as defaulted (nothing changed: no patch).
    A typed object is compared with its own round trip through the model, so a model that
    writes a value differently from the server (a timestamp format) makes no spurious patch.
    An object that does not validate as the model (``replicas: 11`` against ``le=10``) is
    admitted unchanged with a warning: the CRD's schema, which runs after mutating webhooks,
    refuses it with the API's own 422 naming the field.

    Example::

        >>> import asyncio
        >>> class Replicas:
        ...     def default(self, obj: dict) -> None:
        ...         obj.setdefault("spec", {}).setdefault("replicas", 1)
        >>> handler = DefaultingHandler(("example.com/v1", "Foo"), Replicas())
        >>> req = AdmissionRequest.from_dict({"uid": "u", "operation": "CREATE",
        ...     "kind": {"group": "example.com", "version": "v1", "kind": "Foo"},
        ...     "object": {"apiVersion": "example.com/v1", "kind": "Foo", "spec": {}}})
        >>> asyncio.run(handler.handle(req)).patch
        [{'op': 'add', 'path': '/spec/replicas', 'value': 1}]
    """

    #: The operations its webhook configuration lists (kubebuilder's ``verbs=create;update``).
    operations: tuple[str, ...] = ("CREATE", "UPDATE")

    def __init__(self, kind: KindLike, defaulter: Defaulter[T]) -> None:
        super().__init__(kind)
        self.defaulter = defaulter

    async def handle(self, req: AdmissionRequest) -> AdmissionResponse:
        """Default ``req.object`` and answer with the patch."""
        wrong = self._check_kind(req)
        if wrong is not None:
            return wrong
        if req.object is None:
            return AdmissionResponse.allowed()  # DELETE / CONNECT: nothing to default
        try:
            obj = self._decode(req, req.object)
            baseline = (
                req.object if self.model is None else self._encode(self._decode(req, req.object))
            )
        except (ValueError, TypeError, _errors.ModelValidationError) as err:
            # The object breaks the model (a value out of bounds, a wrong type). Admit it as it
            # is: the CRD's schema, generated from the same model, runs after mutating webhooks
            # and refuses it with the API's own 422 naming the field; a defaulter cannot default
            # what it cannot read.
            message = f"not defaulted: {_undecodable(self.kind_info.kind, req, err)}"
            log.info(
                message, extra={"kind": req.kind.kind, "object": req.object_name, "uid": req.uid}
            )
            return AdmissionResponse.allowed(warnings=[message])
        try:
            await _call(self.defaulter.default, obj)
        except Denied as err:
            return AdmissionResponse.denied(err.message, err.code, warnings=err.warnings)
        except Exception as err:
            message = f"defaulter {_describe(self.defaulter)} failed: {type(err).__name__}: {err}"
            _log_failure(message, req, defaulter=_describe(self.defaulter))
            return AdmissionResponse.errored(500, message)
        return AdmissionResponse.patched(baseline, self._encode(obj))

    def __repr__(self) -> str:
        return f"DefaultingHandler({self.kind_info.api_version} {self.kind_info.kind})"


class ValidatingHandler(_TypedHandler[T]):
    """The :class:`AdmissionHandler` of a :class:`Validator` for one kind (validating).

    CREATE calls ``validate_create(object)``, UPDATE ``validate_update(old_object, object)``,
    DELETE ``validate_delete(old_object)`` (the webhook configuration lists DELETE only with
    ``delete=True``). Returned warnings are sent; :class:`Denied` or
    ``ValueError`` refuses with its message (403); any other exception answers 500 naming the
    validator and is logged with the kind, namespace/name and uid. An object that does not
    validate as the model (one stricter than its CRD's schema) is refused with 422 naming the
    field.

    Example::

        >>> import asyncio
        >>> class NoDelete:
        ...     def validate_create(self, obj: dict) -> None: return None
        ...     def validate_update(self, old: dict, new: dict) -> list[str]: return ["careful"]
        ...     def validate_delete(self, obj: dict) -> None: raise Denied("keep it")
        >>> handler = ValidatingHandler(("v1", "ConfigMap"), NoDelete())
        >>> req = AdmissionRequest.from_dict({"uid": "u", "operation": "DELETE", "name": "c",
        ...     "kind": {"version": "v1", "kind": "ConfigMap"}, "oldObject": {}})
        >>> asyncio.run(handler.handle(req)).message
        'keep it'
    """

    def __init__(self, kind: KindLike, validator: Validator[T], *, delete: bool = False) -> None:
        super().__init__(kind)
        self.validator = validator
        #: The operations its webhook configuration lists: CREATE and UPDATE, as kubebuilder
        #: scaffolds (``verbs=create;update``), and DELETE with ``delete=True``.
        self.operations: tuple[str, ...] = (
            ("CREATE", "UPDATE", "DELETE")
            if delete
            else (
                "CREATE",
                "UPDATE",
            )
        )

    async def handle(self, req: AdmissionRequest) -> AdmissionResponse:
        """Validate the change ``req`` describes."""
        wrong = self._check_kind(req)
        if wrong is not None:
            return wrong
        operation = req.operation
        try:
            if operation == "CREATE" and req.object is not None:
                method: Callable[..., Any] = self.validator.validate_create
                args: tuple[Any, ...] = (self._decode(req, req.object),)
            elif operation == "UPDATE" and req.object is not None and req.old_object is not None:
                method = self.validator.validate_update
                args = (self._decode(req, req.old_object), self._decode(req, req.object))
            elif operation == "DELETE" and req.old_object is not None:
                method = self.validator.validate_delete
                args = (self._decode(req, req.old_object),)
            elif operation in ("CREATE", "UPDATE", "DELETE"):
                return AdmissionResponse.errored(
                    400, f"{operation} of {req.object_name} without the object to validate"
                )
            else:
                return AdmissionResponse.errored(400, f"unknown operation {operation!r}")
        except (ValueError, TypeError, _errors.ModelValidationError) as err:
            # Validating webhooks run after the schema, so this is a model stricter than its
            # CRD: the object is invalid as far as this kind's code is concerned.
            message = _undecodable(self.kind_info.kind, req, err)
            log.info(
                message, extra={"kind": req.kind.kind, "object": req.object_name, "uid": req.uid}
            )
            return AdmissionResponse.denied(message, 422)
        try:
            warnings = await _call(method, *args)
        except Denied as err:
            return AdmissionResponse.denied(err.message, err.code, warnings=err.warnings)
        except ValueError as err:
            return AdmissionResponse.denied(str(err) or type(err).__name__)
        except Exception as err:
            name = f"{_describe(self.validator)}.{method.__name__}"
            message = f"validator {name} failed: {type(err).__name__}: {err}"
            _log_failure(message, req, validator=name)
            return AdmissionResponse.errored(500, message)
        if warnings is not None and not isinstance(warnings, list):
            warnings = list(warnings)
        return AdmissionResponse.allowed(warnings=warnings)

    def __repr__(self) -> str:
        return f"ValidatingHandler({self.kind_info.api_version} {self.kind_info.kind})"
