"""Every error kubectrl raises, in one shallow tree rooted at :class:`KubectrlError`.

Errors the API server decides are parsed from the ``Status`` object it sends (HTTP code, ``reason``,
``details.causes``, ``Retry-After``), so ``except NotFoundError`` means exactly what client-go's
``apierrors.IsNotFound`` means. Each class has a ``retryable`` class attribute: ``True`` when
sending the *same* request again later may succeed (throttling, overload, a dropped connection),
``False`` when the caller must change something first (re-read and retry on a conflict, relist
after an expired resourceVersion, fix the request).

The tree (classes without a module are defined here; the others live with the code that raises
them, since their attributes are that code's types, and are importable from the module named)::

    KubectrlError
    ├── ConfigError                    kubeconfig / in-cluster configuration is unusable
    ├── ResourceNotFoundError          discovery knows no such kind / resource (RESTMapper miss)
    ├── ModelValidationError           an object does not validate as the model class asked for
    ├── UnsupportedFeatureError        FakeAPI does not implement what a request asked for
    │                                  (also a NotImplementedError)
    ├── InvalidPathSegmentError        a name, namespace or subresource cannot be one URL path
    │                                  segment ("..", "a/b", "x%6E", empty); refused before
    │                                  anything is sent (also a ValueError)
    ├── APIError                       the server answered with a failure ``Status``
    │   ├── BadRequestError            400
    │   ├── UnauthorizedError          401: no or bad credentials
    │   ├── ForbiddenError             403: RBAC said no (message names user, verb, resource)
    │   ├── NotFoundError              404
    │   ├── MethodNotAllowedError      405
    │   ├── ConflictError              409, reason Conflict: stale resourceVersion, SSA conflict
    │   ├── AlreadyExistsError         409, reason AlreadyExists (create of an existing name)
    │   ├── GoneError                  410: resourceVersion or continue token too old
    │   │   └── ExpiredError           410, reason Expired (the usual form): relist
    │   ├── InvalidError               422: validation failed; ``causes`` lists the fields
    │   ├── TooManyRequestsError       429: throttled (APF); ``retry_after`` seconds  [retryable]
    │   ├── InternalError              500                                        [retryable]
    │   ├── ServiceUnavailableError    503                                        [retryable]
    │   └── ServerTimeoutError         504, or reason Timeout / ServerTimeout      [retryable]
    ├── TransportError                 no usable HTTP answer                      [retryable]
    │   ├── APIConnectionError         connect / TLS / connection reset
    │   ├── RequestTimeoutError        the client's own timeout elapsed
    │   └── MalformedResponseError     an answer that breaks HTTP or a client limit
    ├── WatchError                     a watch stream ended abnormally
    │   ├── WatchStalledError          no bytes for longer than the stall timeout [retryable]
    │   └── MalformedStreamError       a line that is not a watch event, or a truncated one
    ├── CacheSyncError                 kubectrl.cache: an informer did not sync in time
    ├── CacheMutationError             kubectrl.cache: a cached object was changed in place
    ├── LeaderElectionLostError        kubectrl.leaderelection: this process lost its lease
    ├── SourceSyncError                kubectrl.runtime: a controller's sources did not sync
    ├── ReconcileTimeoutError          kubectrl.runtime: a reconcile outran reconcile_timeout
    ├── ManagerError                   kubectrl.runtime: a runnable failed, the manager stopped
    ├── AlreadyOwnedError              kubectrl.runtime: another controller owns the object
    ├── FieldIndexError                kubectrl.runtime: an index function failed on cached
    │                                  objects, so a list by that index would miss them
    │                                  (also a ValueError)
    ├── ClusterNotEngagedError         kubectrl.multicluster: the named cluster is not engaged here
    ├── MultiClusterError              kubectrl.multicluster: its provider or fleet failed, the
    │                                  manager stopped
    ├── ConversionError                kubectrl.webhook: a CRD version conversion failed
    ├── UnsupportedModelError          kubectrl.crd: a model cannot be a CRD (also a ValueError)
    ├── ModelGenerationError           kubectrl.models: no models from this input (not a CRD,
    │                                  no schema, no such version; also a ValueError)
    ├── PolicyError                    kubectrl.admission: a policy the apiserver would refuse
    │                                  (also a ValueError)
    ├── ControlPlaneError              kubectrl.envtest: the local control plane failed to start,
    │   │                              answer or stop (also a RuntimeError)
    │   └── BinaryNotFoundError        kubectrl.envtest: etcd / kube-apiserver not found or built
    ├── StorageError                   kubectrl.apiserver: a storage transaction's condition failed
    │   ├── KeyExistsError             create: the key is taken
    │   ├── RevisionMismatchError      update / delete: the stored revision is not the expected one
    │   └── CompactedError             the revision asked for is older than the kept history
    └── ScaffoldError                  ``python -m kubectrl create``: what stops a scaffold

Deliberately outside the tree: signals, not failures, which ``except KubectrlError`` (say,
around a retry loop) must not swallow::

    Exception
    ├── QueueShutDown                  kubectrl.workqueue: ``get()`` on a shut-down queue; how a
    │                                  worker learns to stop (named and behaving as Python 3.13's
    │                                  asyncio.QueueShutDown / queue.ShutDown). Caught by a
    │                                  retrying ``except KubectrlError`` it would loop forever.
    ├── TerminalError                  kubectrl.runtime: raised BY a reconciler to say "do not
    │                                  requeue"; kubectrl catches it, never raises it at you
    ├── Denied                         kubectrl.webhook: raised BY an admission validator to refuse
    │                                  an object; kubectrl turns it into the webhook's answer
    ├── AdmissionError                 kubectrl.apiserver: raised BY an extension server's admission
    │                                  rule to refuse a write; the server turns it into the answer
    ├── PermanentError                 kubectrl.operator: raised BY a handler: "failed for good on
    │   │                              this change, do not retry"; recorded as its failure
    │   ├── HandlerTimeoutError        kubectrl.operator: the failure recorded when a handler's
    │   │                              ``timeout`` passed
    │   └── HandlerRetriesError        kubectrl.operator: the failure recorded when a handler's
    │                                  ``retries`` were used up
    ├── TemporaryError                 kubectrl.operator: raised BY a handler: "retry after
    │                                  ``delay`` seconds"
    ├── StatusError                    kubectrl.apiserver.inprocess: the API core's answer to a
    │                                  refused request (its code and Status body), for the
    │                                  transport around the core to send; never a client failure
    └── NotImplementedError
        └── FeatureNotImplementedError kubectrl.apiserver.inprocess: a behaviour the API core does
                                       not implement, named; FakeAPI reports it to the client as
                                       UnsupportedFeatureError

Guarantees: messages name the verb, the resource, ``namespace/name`` and the server's reason and
message; they never contain a token, key, password or request body.

Example::

    try:
        await client.get(("v1", "ConfigMap"), "settings", namespace="default")
    except NotFoundError:
        ...
    obj = ignore_not_found(lambda: sync_client.get(("v1", "ConfigMap"), "x", namespace="ns"))
"""

from __future__ import annotations

import dataclasses
import email.utils
import json
import math
import time
from collections.abc import Awaitable, Callable, Mapping
from typing import Any, ClassVar, TypeVar

__all__ = [
    "APIConnectionError",
    "APIError",
    "AlreadyExistsError",
    "BadRequestError",
    "ConfigError",
    "ConflictError",
    "ExpiredError",
    "FieldCause",
    "ForbiddenError",
    "GoneError",
    "InternalError",
    "InvalidError",
    "InvalidPathSegmentError",
    "KubectrlError",
    "MalformedResponseError",
    "MalformedStreamError",
    "MethodNotAllowedError",
    "ModelValidationError",
    "NotFoundError",
    "RequestTimeoutError",
    "ResourceNotFoundError",
    "ServerTimeoutError",
    "ServiceUnavailableError",
    "TooManyRequestsError",
    "TransportError",
    "UnauthorizedError",
    "UnsupportedFeatureError",
    "WatchError",
    "WatchStalledError",
    "aignore_already_exists",
    "aignore_not_found",
    "api_error_from_response",
    "api_error_from_status",
    "ignore_already_exists",
    "ignore_not_found",
    "is_already_exists",
    "is_conflict",
    "is_expired",
    "is_forbidden",
    "is_invalid",
    "is_not_found",
    "is_retryable",
    "is_too_many_requests",
    "is_unauthorized",
]

T = TypeVar("T")


class KubectrlError(Exception):
    """Base of every error kubectrl raises.

    ``retryable`` says whether repeating the same call unchanged may succeed.

    Example::

        try:
            ...
        except KubectrlError as err:
            if err.retryable:
                ...
    """

    retryable: ClassVar[bool] = False


class ConfigError(KubectrlError):
    """The kubeconfig or in-cluster configuration cannot be used.

    The message names the file (or environment variable) and the field at fault, e.g.
    ``/home/me/.kube/config: contexts: no context named "prod" (known: dev, kind-kind)``.
    It never contains credential values.

    Example::

        try:
            load_kubeconfig(context="prod")
        except ConfigError as err:
            print(err.path, err.field)
    """

    def __init__(self, message: str, *, path: str | None = None, field: str | None = None):
        prefix = f"{path}: " if path else ""
        where = f"{field}: " if field else ""
        super().__init__(f"{prefix}{where}{message}")
        self.path = path
        self.field = field


class ResourceNotFoundError(KubectrlError):
    """Discovery has no resource for the requested kind or resource name.

    Raised by the RESTMapper after it refreshed its cache once (so a CRD installed after the client
    started is found, and a kind that really does not exist fails quickly). Like client-go's
    ``NoKindMatchError``.

    Example::

        try:
            await client.get(("example.com/v1", "Widget"), "w", namespace="ns")
        except ResourceNotFoundError:
            ...  # the CRD is not installed
    """


class ModelValidationError(KubectrlError):
    """An object (a dict, usually from the server) does not validate as the model class asked for.

    The message names the kind, the object's ``namespace/name``, the model class and each field
    path at fault with pydantic's short reason, e.g. ``Deployment a/web does not validate as
    V1Deployment: spec.replicas: Input should be a valid integer``. Not retryable: the same object
    fails the same way until the object or the model changes.

    Attributes: ``kind``, ``namespace`` (``None`` for cluster-scoped objects), ``name``, ``model``
    (the class name) and ``fields`` (the dotted field paths, in pydantic's order).

    Example::

        >>> err = ModelValidationError(kind="ConfigMap", namespace="a", name="x",
        ...                            model="V1ConfigMap",
        ...                            problems=[("data.k", "Input should be a valid string")])
        >>> str(err)
        'ConfigMap a/x does not validate as V1ConfigMap: data.k: Input should be a valid string'
        >>> err.fields
        ('data.k',)
    """

    def __init__(
        self,
        *,
        kind: str,
        namespace: str | None,
        name: str | None,
        model: str,
        problems: list[tuple[str, str]],
    ) -> None:
        key = f"{namespace}/{name}" if namespace else (name or "<unnamed>")
        detail = "; ".join(f"{path or '<root>'}: {reason}" for path, reason in problems)
        super().__init__(f"{kind or '<no kind>'} {key} does not validate as {model}: {detail}")
        self.kind = kind
        self.namespace = namespace
        self.name = name
        self.model = model
        self.fields = tuple(path for path, _ in problems)


class UnsupportedFeatureError(KubectrlError, NotImplementedError):
    """The fake API server does not implement a feature the request asked for.

    ``feature`` names it; the message is ``FakeAPI does not implement <feature>``. The fake
    raises it (it reaches the test as is, through the client) rather than silently doing
    something the real apiserver would not. Also a :class:`NotImplementedError`. Not retryable.

    Example::

        >>> err = UnsupportedFeatureError("server-side apply to the scale subresource")
        >>> str(err)
        'FakeAPI does not implement server-side apply to the scale subresource'
        >>> err.feature, isinstance(err, NotImplementedError)
        ('server-side apply to the scale subresource', True)
    """

    def __init__(self, feature: str) -> None:
        super().__init__(f"FakeAPI does not implement {feature}")
        self.feature = feature


class InvalidPathSegmentError(KubectrlError, ValueError):
    """A name, namespace, subresource (or container, port, proxied path) that cannot stay in its
    own part of the request's URL; the request is refused before anything is sent.

    A name is one URL path segment: it may not be empty (an empty name would address the whole
    collection: a ``delete`` would become a ``deletecollection``), ``"."`` or ``".."``, nor
    contain ``"/"`` or ``"%"`` (which would move the request to another object, another
    namespace, another resource); the rules of the apiserver's ``IsValidPathSegmentName``, which
    client-go's request builder applies. Other characters (``?``, ``#``, spaces...) are
    percent-encoded and stay in their segment.

    Attributes: ``argument`` (``"name"``, ``"namespace"``, ``"subresource"``...), ``value`` (as
    given), ``problems`` (what is wrong with it), ``verb`` and ``resource``. Also a
    :class:`ValueError`. Not retryable: the same value fails the same way.

    Example::

        >>> err = InvalidPathSegmentError("name", "..", ["may not be '..'"], verb="get",
        ...                               resource="configmaps")
        >>> str(err)
        "get configmaps: invalid name '..': may not be '..' (nothing was sent)"
        >>> isinstance(err, ValueError), err.argument
        (True, 'name')
    """

    def __init__(
        self,
        argument: str,
        value: object,
        problems: list[str],
        *,
        verb: str = "",
        resource: str = "",
    ) -> None:
        head = f"{verb} {resource}".strip()
        text = f"invalid {argument} {value!r}: {'; '.join(problems)} (nothing was sent)"
        super().__init__(f"{head}: {text}" if head else text)
        self.argument = argument
        self.value = value
        self.problems = tuple(problems)
        self.verb = verb
        self.resource = resource

    def __reduce__(self) -> tuple[Any, ...]:
        parts = (self.argument, self.value, list(self.problems), self.verb, self.resource)
        return (_rebuild_path_error, parts)


def _rebuild_path_error(
    argument: str, value: object, problems: list[str], verb: str, resource: str
) -> InvalidPathSegmentError:
    return InvalidPathSegmentError(argument, value, problems, verb=verb, resource=resource)


@dataclasses.dataclass(frozen=True)
class FieldCause:
    """One field-level cause from ``Status.details.causes`` (mostly from 422 Invalid).

    ``type`` is the server's cause type (``FieldValueRequired``, ``FieldValueInvalid``, ...),
    ``field`` the JSON path (``metadata.name``, ``spec.replicas``).

    Example::

        for cause in err.causes:
            print(cause.field, cause.message)
    """

    type: str
    message: str
    field: str


class APIError(KubectrlError):
    """The API server answered with a failure ``Status``.

    Attributes: ``code`` (HTTP status), ``reason`` (``Status.reason``, e.g. ``NotFound``),
    ``server_message`` (``Status.message``), ``status`` (the decoded ``Status`` dict), ``verb``,
    ``resource``, ``namespace``, ``name`` and ``causes`` (:class:`FieldCause` list).

    ``str(err)`` reads like ``get configmaps default/settings: NotFound (404): configmaps
    "settings" not found``.

    Example::

        except APIError as err:
            log.warning("request failed", extra={"code": err.code, "reason": err.reason})
    """

    #: The HTTP status this class stands for (0 for "any").
    default_code: ClassVar[int] = 0

    def __init__(
        self,
        server_message: str = "",
        *,
        code: int | None = None,
        reason: str = "",
        status: Mapping[str, Any] | None = None,
        verb: str = "",
        resource: str = "",
        namespace: str | None = None,
        name: str | None = None,
        causes: tuple[FieldCause, ...] = (),
        retry_after: float | None = None,
    ) -> None:
        self.code = code if code is not None else self.default_code
        self.reason = reason
        self.server_message = server_message
        self.status: dict[str, Any] = dict(status or {})
        self.verb = verb
        self.resource = resource
        self.namespace = namespace
        self.name = name
        self.causes = causes
        self.retry_after = retry_after
        super().__init__(self._format())

    def _format(self) -> str:
        target = self.resource or "resource"
        if self.name:
            target += f" {self.namespace}/{self.name}" if self.namespace else f" {self.name}"
        elif self.namespace:
            target += f" in namespace {self.namespace}"
        head = f"{self.verb} {target}".strip()
        reason = self.reason or type(self).__name__
        text = f"{head}: {reason} ({self.code})"
        if self.server_message:
            text += f": {self.server_message}"
        if self.causes and not any(c.message in self.server_message for c in self.causes):
            text += "; " + "; ".join(f"{c.field}: {c.message}" for c in self.causes)
        return text

    def __reduce__(self) -> tuple[Any, ...]:
        return (_rebuild_api_error, (type(self), self.__dict__.copy()))


def _rebuild_api_error(cls: type[APIError], state: dict[str, Any]) -> APIError:
    err = cls.__new__(cls)
    err.__dict__.update(state)
    Exception.__init__(err, err._format())
    return err


class BadRequestError(APIError):
    """400 Bad Request: the request is malformed (e.g. a bad selector or patch)."""

    default_code = 400


class UnauthorizedError(APIError):
    """401 Unauthorized: credentials are missing, wrong or expired.

    The client re-reads rotated token files and re-runs exec plugins once on a 401 before raising.
    """

    default_code = 401


class ForbiddenError(APIError):
    """403 Forbidden: authorization (RBAC) denied the request.

    The server's message names the user, verb and resource, e.g. ``configmaps is forbidden: User
    "alice" cannot list resource "configmaps" in API group "" in the namespace "ns"``.
    """

    default_code = 403


class NotFoundError(APIError):
    """404 Not Found: the object (or namespace, or resource endpoint) does not exist."""

    default_code = 404


class MethodNotAllowedError(APIError):
    """405 Method Not Allowed: the resource does not support this verb."""

    default_code = 405


class ConflictError(APIError):
    """409 Conflict: the object changed since it was read, or server-side apply found a conflict.

    Not retryable as is; re-read the object and try again (see ``retry_on_conflict``), or for
    server-side apply decide whether to ``force``.
    """

    default_code = 409


class AlreadyExistsError(APIError):
    """409 with reason ``AlreadyExists``: a create named an object that exists.

    Deliberately not a :class:`ConflictError` subclass: ``retry_on_conflict`` must not loop on it.
    """

    default_code = 409


class GoneError(APIError):
    """410 Gone: the resourceVersion or continue token is older than etcd keeps.

    The only way forward is a fresh list (client-go's reflector relists).
    """

    default_code = 410


class ExpiredError(GoneError):
    """410 with reason ``Expired``: "too old resource version" or an expired continue token."""


class InvalidError(APIError):
    """422 Unprocessable Entity: validation failed; ``causes`` lists each field and why."""

    default_code = 422


class TooManyRequestsError(APIError):
    """429 Too Many Requests: API Priority and Fairness throttled the call.

    ``retry_after`` holds the server's ``Retry-After`` seconds when it sent one. Retryable for every
    verb, since the server did not process the request.
    """

    default_code = 429
    retryable = True


class InternalError(APIError):
    """500 Internal Server Error (including etcd trouble reported by the server)."""

    default_code = 500
    retryable = True


class ServiceUnavailableError(APIError):
    """503 Service Unavailable (an aggregated API down, the server shutting down)."""

    default_code = 503
    retryable = True


class ServerTimeoutError(APIError):
    """504, or reason ``Timeout`` / ``ServerTimeout``: the server gave up before finishing."""

    default_code = 504
    retryable = True


class TransportError(KubectrlError):
    """No usable HTTP answer: connection refused or reset, TLS failure, timeout.

    Retryable, though only idempotent requests are retried automatically (a connect failure is
    retried for every verb, since nothing reached the server).
    """

    retryable = True

    def __init__(self, message: str, *, verb: str = "", resource: str = "") -> None:
        head = f"{verb} {resource}".strip()
        super().__init__(f"{head}: {message}" if head else message)
        self.verb = verb
        self.resource = resource


class APIConnectionError(TransportError):
    """Could not connect to, or lost the connection with, the API server.

    ``connect_failed`` is True when the request never reached the server (safe to resend for any
    verb).
    """

    def __init__(
        self, message: str, *, verb: str = "", resource: str = "", connect_failed: bool = False
    ) -> None:
        super().__init__(message, verb=verb, resource=resource)
        self.connect_failed = connect_failed


class RequestTimeoutError(TransportError):
    """The client-side timeout elapsed before the server answered."""


class MalformedResponseError(TransportError):
    """The server's answer broke HTTP/1.1 or one of the client's limits, or its body is not
    what its headers say: an unasked protocol switch, a response head over the header limit, a
    body over ``max_response_bytes``, a gzip body that does not inflate, JSON that does not
    parse. The message says which, and the connection is not used again.
    """


class WatchError(KubectrlError):
    """A watch stream ended abnormally (not a clean end, not a server ``ERROR`` event)."""


class WatchStalledError(WatchError):
    """No bytes arrived on a watch for longer than its stall timeout.

    Usually a dead TCP connection that nobody reset (client-go #374, kubernetes-client/python
    #1402). Retryable: watch again from the last resourceVersion.
    """

    retryable = True


class MalformedStreamError(WatchError):
    """The stream held something that is not a watch event, or ended inside one.

    The message quotes at most 200 bytes of the offending line.
    """


# reason -> class, checked before the HTTP code (Status.reason is the API's contract).
_BY_REASON: dict[str, type[APIError]] = {
    "AlreadyExists": AlreadyExistsError,
    "Conflict": ConflictError,
    "Expired": ExpiredError,
    "Gone": GoneError,
    "Invalid": InvalidError,
    "NotFound": NotFoundError,
    "Forbidden": ForbiddenError,
    "Unauthorized": UnauthorizedError,
    "TooManyRequests": TooManyRequestsError,
    "ServerTimeout": ServerTimeoutError,
    "Timeout": ServerTimeoutError,
    "InternalError": InternalError,
    "ServiceUnavailable": ServiceUnavailableError,
    "MethodNotAllowed": MethodNotAllowedError,
    "BadRequest": BadRequestError,
}

_BY_CODE: dict[int, type[APIError]] = {
    400: BadRequestError,
    401: UnauthorizedError,
    403: ForbiddenError,
    404: NotFoundError,
    405: MethodNotAllowedError,
    409: ConflictError,
    410: GoneError,
    422: InvalidError,
    429: TooManyRequestsError,
    500: InternalError,
    503: ServiceUnavailableError,
    504: ServerTimeoutError,
}


def _parse_retry_after(value: str | None) -> float | None:
    """``Retry-After`` seconds (a number or an HTTP date); None for anything else, a value that
    is not finite (``nan``, ``1e999``) included."""
    if not value:
        return None
    value = value.strip()
    try:
        seconds = float(value)
    except ValueError:
        pass
    else:
        return max(0.0, seconds) if math.isfinite(seconds) else None
    try:
        when = email.utils.parsedate_to_datetime(value)
        return max(0.0, when.timestamp() - time.time())
    except Exception:  # any date the parser chokes on (or cannot place in time) is no date
        return None


def _status_text(value: object) -> str:
    """A ``Status`` field as text: a string as it is, a number or boolean as JSON spells it,
    anything else (an object, a list, null) ignored. A hostile server's Status may carry any
    JSON value in any field; the error built from it must still be the one its code asks for."""
    if isinstance(value, str):
        return value
    if isinstance(value, (bool, int, float)):
        try:
            return json.dumps(value)
        except ValueError:  # an int beyond the interpreter's digit limit
            return ""
    return ""


def _status_code(value: object) -> int:
    """``Status.code`` when it is an integer HTTP status (100-999, as Go's int32 field would
    hold a real one), else 0: a string, a float, a boolean or a wild number says nothing."""
    if isinstance(value, int) and not isinstance(value, bool) and 100 <= value <= 999:
        return value
    return 0


def _status_causes(details: Mapping[str, Any]) -> tuple[FieldCause, ...]:
    """``details.causes`` as :class:`FieldCause` objects; a ``causes`` that is not a list, and
    each cause that is not an object, are ignored, as are cause fields that are not text."""
    causes = details.get("causes")
    if not isinstance(causes, list):
        return ()
    return tuple(
        FieldCause(
            type=_status_text(c.get("reason")),
            message=_status_text(c.get("message")),
            field=_status_text(c.get("field")),
        )
        for c in causes
        if isinstance(c, Mapping)
    )


def api_error_from_status(
    status: Mapping[str, Any],
    *,
    code: int | None = None,
    verb: str = "",
    resource: str = "",
    namespace: str | None = None,
    name: str | None = None,
    retry_after: str | float | None = None,
) -> APIError:
    """Build the matching :class:`APIError` subclass from a ``Status`` dict.

    ``code`` defaults to ``status["code"]``. The class is chosen by ``reason`` first, then by the
    HTTP code (an unknown 5xx becomes :class:`InternalError`, other unknown codes
    :class:`APIError`). ``retry_after`` (a header value or seconds) falls back to
    ``details.retryAfterSeconds``.

    A field of the wrong JSON type (a server's bug, or a hostile one) never makes this raise: a
    number or boolean where text belongs is stringified, any other value ignored; a ``code``
    that is not an integer HTTP status, ``details`` that are not an object, ``causes`` that are
    not a list (or a cause that is not an object) and a ``retryAfterSeconds`` that is not an
    integer are ignored.

    Example::

        >>> err = api_error_from_status({"kind": "Status", "status": "Failure", "code": 404,
        ...     "reason": "NotFound", "message": 'configmaps "x" not found'},
        ...     verb="get", resource="configmaps", namespace="ns", name="x")
        >>> type(err).__name__, str(err)
        ('NotFoundError', 'get configmaps ns/x: NotFound (404): configmaps "x" not found')
    """
    http_code = _status_code(code if code is not None else status.get("code"))
    reason = _status_text(status.get("reason"))
    details = status.get("details")
    if not isinstance(details, Mapping):
        details = {}
    cls = _BY_REASON.get(reason) or _BY_CODE.get(http_code)
    if cls is None:
        cls = InternalError if http_code >= 500 else APIError
    if cls is GoneError and reason == "Expired":
        cls = ExpiredError
    causes = _status_causes(details)
    seconds: float | None
    if isinstance(retry_after, (int, float)):
        seconds = float(retry_after)
    else:
        seconds = _parse_retry_after(retry_after)
    after = details.get("retryAfterSeconds")
    if seconds is None and isinstance(after, int) and not isinstance(after, bool):
        seconds = float(max(0, after))
    if name is None and isinstance(details.get("name"), str) and details["name"]:
        name = details["name"]
    return cls(
        _status_text(status.get("message")),
        code=http_code or cls.default_code,
        reason=reason,
        status=status,
        verb=verb,
        resource=resource,
        namespace=namespace,
        name=name,
        causes=causes,
        retry_after=seconds,
    )


def api_error_from_response(
    code: int,
    body: bytes,
    *,
    retry_after: str | None = None,
    verb: str = "",
    resource: str = "",
    namespace: str | None = None,
    name: str | None = None,
) -> APIError:
    """Build an :class:`APIError` from an HTTP error response.

    Uses the body when it is a JSON ``Status``; otherwise (a proxy's HTML page, an empty body,
    JSON nested too deeply to decode) synthesises one from the code and at most 200 bytes of the
    body. Whatever the body holds, the result is the class the code (or the Status's ``reason``)
    asks for: fields of the wrong JSON type are ignored (see :func:`api_error_from_status`).

    Example::

        >>> type(api_error_from_response(503, b"<html>busy</html>")).__name__
        'ServiceUnavailableError'
    """
    status: Mapping[str, Any] | None = None
    try:
        decoded = json.loads(body) if body else None
    except (ValueError, RecursionError):  # not JSON, not UTF-8, or nested past the recursion limit
        decoded = None
    if isinstance(decoded, dict) and decoded.get("kind") == "Status":
        status = decoded
    if status is None:
        text = body[:200].decode("utf-8", "replace").strip()
        status = {"kind": "Status", "status": "Failure", "code": code, "message": text}
    return api_error_from_status(
        status,
        code=code,
        verb=verb,
        resource=resource,
        namespace=namespace,
        name=name,
        retry_after=retry_after,
    )


def is_not_found(err: BaseException | None) -> bool:
    """True for :class:`NotFoundError` (404). Example: ``if is_not_found(err): return``."""
    return isinstance(err, NotFoundError)


def is_already_exists(err: BaseException | None) -> bool:
    """True for :class:`AlreadyExistsError`. Example: ``if is_already_exists(err): ...``."""
    return isinstance(err, AlreadyExistsError)


def is_conflict(err: BaseException | None) -> bool:
    """True for :class:`ConflictError` (not AlreadyExists). Example: ``if is_conflict(e): ...``."""
    return isinstance(err, ConflictError)


def is_expired(err: BaseException | None) -> bool:
    """True for any 410 (:class:`GoneError` or :class:`ExpiredError`): relist from scratch.

    Matches client-go's reflector, which treats ``IsResourceExpired`` and ``IsGone`` alike.
    Example: ``if is_expired(err): resource_version = ""``.
    """
    return isinstance(err, GoneError)


def is_forbidden(err: BaseException | None) -> bool:
    """True for :class:`ForbiddenError` (403). Example: ``if is_forbidden(err): ...``."""
    return isinstance(err, ForbiddenError)


def is_unauthorized(err: BaseException | None) -> bool:
    """True for :class:`UnauthorizedError` (401). Example: ``if is_unauthorized(err): ...``."""
    return isinstance(err, UnauthorizedError)


def is_invalid(err: BaseException | None) -> bool:
    """True for :class:`InvalidError` (422). Example: ``if is_invalid(err): print(err.causes)``."""
    return isinstance(err, InvalidError)


def is_too_many_requests(err: BaseException | None) -> bool:
    """True for :class:`TooManyRequestsError` (429). Example: ``is_too_many_requests(err)``."""
    return isinstance(err, TooManyRequestsError)


def is_retryable(err: BaseException | None) -> bool:
    """True when ``err`` is a kubectrl error whose class says a plain retry may succeed.

    Example: ``if is_retryable(err): schedule_retry()``.
    """
    return isinstance(err, KubectrlError) and err.retryable


def ignore_not_found(fn: Callable[[], T]) -> T | None:
    """Call ``fn()`` and return its result, or ``None`` if it raised :class:`NotFoundError`.

    For coroutines use :func:`aignore_not_found`.

    Example::

        cm = ignore_not_found(lambda: client.get(("v1", "ConfigMap"), "x", namespace="ns"))
    """
    try:
        return fn()
    except NotFoundError:
        return None


def ignore_already_exists(fn: Callable[[], T]) -> T | None:
    """Call ``fn()``; return ``None`` instead of raising :class:`AlreadyExistsError`.

    Example::

        ignore_already_exists(lambda: client.create(namespace_obj))
    """
    try:
        return fn()
    except AlreadyExistsError:
        return None


async def aignore_not_found(awaitable: Awaitable[T]) -> T | None:
    """Await ``awaitable``; return ``None`` instead of raising :class:`NotFoundError`.

    Example::

        cm = await aignore_not_found(client.get(("v1", "ConfigMap"), "x", namespace="ns"))
    """
    try:
        return await awaitable
    except NotFoundError:
        return None


async def aignore_already_exists(awaitable: Awaitable[T]) -> T | None:
    """Await ``awaitable``; return ``None`` instead of raising :class:`AlreadyExistsError`.

    Example::

        await aignore_already_exists(client.create(namespace_obj))
    """
    try:
        return await awaitable
    except AlreadyExistsError:
        return None
