"""The operator: handlers per cause registered with decorators, dispatched by one controller per
kind on kubectrl's runtime (one worker per key, level-based, leader-only).

Semantics are kopf's (``kopf/_core/reactor/processing.py``, ``kopf/_core/intents/causes.py``,
``kopf/_core/actions/progression.py``, ``kopf/_core/actions/execution.py``), reached by
reconciling: each reconcile of an object compares its essence with the last handled one stored
on it (see ``_state``), runs the handlers of that change that are not done yet, stores their
progress on the object, and stores the new essence once all are done.
"""

from __future__ import annotations

import asyncio
import contextvars
import copy
import dataclasses
import datetime
import json
import logging
import re
import sys
from collections.abc import Awaitable, Callable, Hashable, Iterator, Mapping, Sequence
from types import SimpleNamespace
from typing import TYPE_CHECKING, Any, TypeVar

from kubectrl.client import ClientConfig
from kubectrl.errors import NotFoundError
from kubectrl.events import CORE_V1
from kubectrl.objects import ObjectKey
from kubectrl.operator._admission import (
    AdmissionDispatch,
    AdmissionHandlerDef,
    check_operations,
)
from kubectrl.operator._daemons import Daemons
from kubectrl.operator._errors import (
    HandlerRetriesError,
    HandlerTimeoutError,
    PermanentError,
    TemporaryError,
)
from kubectrl.operator._filters import MetaFilter, check_meta_filter, meta_matches
from kubectrl.operator._kwargs import call_handler, call_handler_sync, object_kwargs
from kubectrl.operator._state import (
    diff,
    digest,
    essence,
    field_path,
    iso,
    parse_iso,
    resolve,
)
from kubectrl.operator._watchers import KindKey, ObjectWatcher
from kubectrl.runtime import Controller, Manager, Request, Result
from kubectrl.runtime.source import KindSource

if TYPE_CHECKING:
    from kubectrl.cache import Informer
    from kubectrl.events import EventRecorder
    from kubectrl.runtime import CachedClient

__all__ = ["Index", "Operator", "adopt", "register"]

F = TypeVar("F", bound=Callable[..., Any])

log = logging.getLogger("kubectrl.operator")

#: How long a deleted object's key waits before asking the watchers again whether everything
#: that followed it has stopped (seconds).
GONE_REQUEUE_AFTER = 1.0
#: The default delay before retrying a handler that raised (kopf's default ``backoff``).
DEFAULT_BACKOFF = 60.0

_DNS_LABEL = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$")
_CAUSES = ("create", "update", "delete", "resume", "field")


@dataclasses.dataclass
class _Handler:
    fn: Callable[..., Any]
    id: str
    cause: str
    field: tuple[str, ...] | None = None
    when: Callable[..., Any] | None = None
    labels: MetaFilter | None = None
    annotations: MetaFilter | None = None
    retries: int | None = None
    backoff: float = DEFAULT_BACKOFF
    timeout: float | None = None
    optional: bool = False


@dataclasses.dataclass
class _IndexDef:
    fn: Callable[..., Any]
    kind: KindKey
    index: Index


_subhandlers: contextvars.ContextVar[list[_Handler] | None] = contextvars.ContextVar(
    "kubectrl_operator_subhandlers", default=None
)


def register(
    fn: Callable[..., Any],
    *,
    id: str | None = None,
    retries: int | None = None,
    backoff: float = DEFAULT_BACKOFF,
    timeout: float | None = None,
) -> Callable[..., Any]:
    """Register a sub-handler from inside a change handler (kopf's ``kopf.register``).

    The parent handler is done once every sub-handler it registered is done; each sub-handler
    runs to success once per change, with its own retries, backoff and timeout and its own
    progress record (id ``<parent id>/<sub id>``). The parent is called again on every pass
    until then (to register its sub-handlers again), so it must only register them. Outside a
    handler: ``RuntimeError``.

    Example::

        @operator.on_create(FOO)
        async def create(spec, **_):
            for db in spec["databases"]:
                async def make(db=db, **_): ...
                register(make, id=db)
    """
    found = _subhandlers.get()
    if found is None:
        raise RuntimeError(f"register({_fn_id(fn)}): only inside a change handler")
    _check_retry_options(retries, backoff, timeout)
    found.append(
        _Handler(fn, id or _fn_id(fn), "sub", retries=retries, backoff=backoff, timeout=timeout)
    )
    return fn


def _fn_id(fn: Callable[..., Any]) -> str:
    return str(getattr(fn, "__qualname__", None) or getattr(fn, "__name__", None) or repr(fn))


def _check_retry_options(retries: int | None, backoff: float, timeout: float | None) -> None:
    if retries is not None and (not isinstance(retries, int) or retries < 1):
        raise ValueError(f"retries must be an int >= 1 or None, not {retries!r}")
    if not backoff >= 0 or backoff == float("inf"):
        raise ValueError(f"backoff must be a finite number >= 0, not {backoff!r}")
    if timeout is not None and not timeout > 0:
        raise ValueError(f"timeout must be a number > 0 or None, not {timeout!r}")


def _kind(kind: Any) -> KindKey:
    if (
        isinstance(kind, tuple)
        and len(kind) == 2
        and all(isinstance(part, str) and part for part in kind)
    ):
        return (kind[0], kind[1])
    raise TypeError(f"kind must be an (apiVersion, kind) tuple such as ('v1', 'Pod'), not {kind!r}")


class Index(Mapping[Hashable, tuple[Any, ...]]):
    """An in-memory index over every object of one kind: key -> the values objects gave it.

    Filled by an ``@operator.index(kind)`` function from the informer's events (kopf's
    ``kopf.index``, ``kopf/_core/engines/indexing.py``): the function returns a mapping
    ``{key: value}`` (each pair is added) or any other value (added under the key ``None``);
    an object's contributions are replaced when it changes and dropped when it is deleted.
    Handlers receive it by the index function's name. It is eventually consistent with the
    cache (it follows the same watch events, delivered on their own).

    Example::

        >>> index = Index("by_label")
        >>> index._put(("ns", "a"), {"web": 1})
        >>> index["web"], len(index)
        ((1,), 1)
    """

    def __init__(self, name: str) -> None:
        self.name = name
        self._by_object: dict[Hashable, dict[Hashable, Any]] = {}

    def _put(self, obj_key: Hashable, pairs: Mapping[Hashable, Any] | None) -> None:
        if pairs:
            self._by_object[obj_key] = dict(pairs)
        else:
            self._by_object.pop(obj_key, None)

    def __getitem__(self, key: Hashable) -> tuple[Any, ...]:
        values = tuple(p[key] for p in self._by_object.values() if key in p)
        if not values:
            raise KeyError(key)
        return values

    def __iter__(self) -> Iterator[Hashable]:
        seen: dict[Hashable, None] = {}
        for pairs in self._by_object.values():
            for key in pairs:
                seen.setdefault(key, None)
        return iter(seen)

    def __len__(self) -> int:
        return sum(1 for _ in self)

    def __repr__(self) -> str:
        return f"<Index {self.name} keys={len(self)}>"


def adopt(
    child: dict[str, Any],
    owner: Mapping[str, Any],
    *,
    nested: bool = False,
) -> dict[str, Any]:
    """Make ``child`` (an object dict, changed in place and returned) belong to ``owner``, as
    ``kopf.adopt`` does (``kopf/_kits/hierarchies.py``): a controller owner reference (with
    ``blockOwnerDeletion``), the owner's namespace when the child has none and the owner is
    namespaced, ``generateName`` ``<owner name>-`` when the child has neither name nor
    ``generateName``, and the owner's labels where the child has none of that name.

    An owner without ``apiVersion``, ``kind``, ``metadata.name`` or ``metadata.uid`` is a
    ``ValueError`` naming what is missing; so is a child that already has another controller.

    Example::

        >>> owner = {"apiVersion": "v1", "kind": "ConfigMap",
        ...          "metadata": {"name": "a", "namespace": "ns", "uid": "u1",
        ...                       "labels": {"app": "x"}}}
        >>> pod = adopt({"metadata": {}}, owner)
        >>> pod["metadata"]["namespace"], pod["metadata"]["generateName"]
        ('ns', 'a-')
        >>> pod["metadata"]["ownerReferences"][0]["uid"], pod["metadata"]["labels"]
        ('u1', {'app': 'x'})
    """
    meta_owner = owner.get("metadata") or {}
    missing = [
        what
        for what, value in (
            ("apiVersion", owner.get("apiVersion")),
            ("kind", owner.get("kind")),
            ("metadata.name", meta_owner.get("name")),
            ("metadata.uid", meta_owner.get("uid")),
        )
        if not value
    ]
    if missing:
        raise ValueError(f"adopt: the owner has no {', '.join(missing)}")
    meta = child.setdefault("metadata", {})
    if meta is None:
        meta = child["metadata"] = {}
    ref = {
        "apiVersion": owner["apiVersion"],
        "kind": owner["kind"],
        "name": meta_owner["name"],
        "uid": meta_owner["uid"],
        "controller": True,
        "blockOwnerDeletion": True,
    }
    refs = list(meta.get("ownerReferences") or [])
    for existing in refs:
        if existing.get("controller") and existing.get("uid") != ref["uid"]:
            raise ValueError(
                f"adopt: the child is already controlled by {existing.get('kind')} "
                f"{existing.get('name')!r}"
            )
    refs = [r for r in refs if r.get("uid") != ref["uid"]]
    refs.append(ref)
    meta["ownerReferences"] = refs
    if not meta.get("namespace") and meta_owner.get("namespace"):
        meta["namespace"] = meta_owner["namespace"]
    if not meta.get("name") and not meta.get("generateName"):
        meta["generateName"] = f"{meta_owner['name']}-"
    owner_labels = meta_owner.get("labels") or {}
    if owner_labels:
        labels = meta.setdefault("labels", {}) or {}
        for key, value in owner_labels.items():
            labels.setdefault(key, value)
        meta["labels"] = labels
    if nested:
        spec_meta = (
            child.setdefault("spec", {}).setdefault("template", {}).setdefault("metadata", {})
        )
        labels = spec_meta.setdefault("labels", {})
        for key, value in owner_labels.items():
            labels.setdefault(key, value)
    return child


class _Outcome:
    """What one pass over a set of handlers came to."""

    def __init__(self) -> None:
        self.done = True
        self.delay: float | None = None

    def wait(self, seconds: float) -> None:
        self.done = False
        seconds = max(seconds, 0.0)
        self.delay = seconds if self.delay is None else min(self.delay, seconds)


class Operator:
    """Handlers per cause on a :class:`~kubectrl.runtime.Manager`: kopf's programming model
    on kubectrl's runtime.

    ``name`` (a DNS label, default ``"operator"``) makes the domain of everything the operator
    stores on objects: ``<name>.kubectrl.io/last-handled-configuration``,
    ``<name>.kubectrl.io/progress`` and the finalizer ``<name>.kubectrl.io/finalizer``. Two
    operators with different names handle the same objects independently.

    The operator is one leader-only runnable of the manager (added here): when the manager
    starts (and leads), it runs the ``on_startup`` hooks, then one controller per registered
    kind; when it stops (shutdown or lost leadership) it stops them, stops its watchers (the
    daemons) and runs the ``on_cleanup`` hooks.

    Example::

        manager = Manager(api.config())
        operator = Operator(manager)

        @operator.on_create(("v1", "ConfigMap"))
        async def created(name, spec, logger, **_):
            logger.info("created %s", name)
    """

    need_leader_election = True

    def __init__(self, manager: Manager | None = None, *, name: str = "operator") -> None:
        if not isinstance(name, str) or len(name) > 63 or not _DNS_LABEL.match(name):
            raise ValueError(
                f"Operator name must be a DNS label (lowercase letters, digits, '-'), not {name!r}"
            )
        self._manager: Manager | None = None
        self._name = name
        self.domain = f"{name}.kubectrl.io"
        self.last_handled_annotation = f"{self.domain}/last-handled-configuration"
        self.progress_annotation = f"{self.domain}/progress"
        self.finalizer = f"{self.domain}/finalizer"
        #: Operator-wide memo: passed as ``memo`` to startup, cleanup and probe functions.
        self.memo = SimpleNamespace()
        self._handlers: dict[KindKey, list[_Handler]] = {}
        self._event_handlers: dict[KindKey, list[_Handler]] = {}
        self._indexes: dict[str, _IndexDef] = {}
        self._startup: list[Callable[..., Any]] = []
        self._cleanup: list[Callable[..., Any]] = []
        self._probes: dict[str, Callable[..., Any]] = {}
        self._watchers: list[ObjectWatcher] = []
        self._memos: dict[tuple[KindKey, ObjectKey], SimpleNamespace] = {}
        self._resume: dict[tuple[KindKey, ObjectKey], dict[str, Any] | None] = {}
        self._controllers: dict[KindKey, Controller] = {}
        self._registrations: list[tuple[Informer, Any]] = []
        self._pumps: list[asyncio.Task[None]] = []
        self._fence: Callable[[], bool] | None = None
        self._running = False
        self._loop: asyncio.AbstractEventLoop | None = None
        self._recorder: EventRecorder | None = None
        self._admission: dict[tuple[KindKey, bool], AdmissionDispatch] = {}
        self._daemons = Daemons(self)
        self.add_watcher(self._daemons)
        if manager is not None:
            self.attach(manager)

    def attach(self, manager: Manager) -> None:
        """Run on ``manager`` (once; ``Operator(manager)`` attaches at once). An operator made
        without one, as a module-level ``operator = Operator()`` that kopf users write, is
        attached by :meth:`run` or ``python -m kubectrl operator run FILE``, or by a test.

        Example::

            operator = Operator()
            operator.attach(Manager(api.config()))
        """
        if self._manager is not None:
            raise RuntimeError(f"operator {self._name!r} is already attached to a manager")
        self._manager = manager
        manager.add(self)
        for (kind, _mutating), dispatch in self._admission.items():
            self._serve_admission(kind, dispatch)
        if self._probes:
            manager.add_healthz_check(f"operator-{self._name}", self._health)

    def run(self, config: ClientConfig | None = None) -> None:
        """Run until SIGTERM or SIGINT (kopf's ``kopf run``): on the attached manager, or on a
        new :class:`~kubectrl.runtime.Manager` of ``config`` (default: the kubeconfig, or the
        in-cluster config).

        Example::

            if __name__ == "__main__":
                operator.run()
        """
        if self._manager is None:
            self.attach(Manager(config))
        self.manager.run()

    # ------------------------------------------------------------------ accessors

    @property
    def name(self) -> str:
        """The operator's name (the domain of what it stores on objects)."""
        return self._name

    @property
    def attached(self) -> bool:
        """Whether the operator has a manager (:meth:`attach`)."""
        return self._manager is not None

    @property
    def manager(self) -> Manager:
        """The manager the operator runs on (``RuntimeError`` before :meth:`attach`)."""
        if self._manager is None:
            raise RuntimeError(
                f"operator {self._name!r} is not attached to a manager: Operator(manager), "
                "operator.attach(manager), operator.run() or python -m kubectrl operator run FILE"
            )
        return self._manager

    @property
    def clock(self) -> Any:
        """The manager's clock (a ``FakeClock`` in tests)."""
        return self.manager.clock

    @property
    def client(self) -> CachedClient:
        """The manager's cached client."""
        return self.manager.client

    @property
    def controllers(self) -> dict[KindKey, Controller]:
        """The controllers running (one per kind), while the operator runs."""
        return dict(self._controllers)

    def add_watcher(self, watcher: ObjectWatcher) -> None:
        """Drive ``watcher`` (an :class:`ObjectWatcher`) for every object of its kinds; before
        the operator starts.

        Example: ``operator.add_watcher(my_watcher)``.
        """
        if self._running:
            raise RuntimeError("add_watcher: the operator is already running")
        self._watchers.append(watcher)

    # ------------------------------------------------------------------ decorators

    def _register(
        self,
        kind: Any,
        cause: str,
        *,
        id: str | None,
        field: Any = None,
        when: Callable[..., Any] | None = None,
        labels: MetaFilter | None = None,
        annotations: MetaFilter | None = None,
        retries: int | None = None,
        backoff: float = DEFAULT_BACKOFF,
        timeout: float | None = None,
        optional: bool = False,
    ) -> Callable[[F], F]:
        key = _kind(kind)
        path = field_path(field) if field is not None else None
        _check_retry_options(retries, backoff, timeout)
        if when is not None and not callable(when):
            raise TypeError(f"when must be a callable, not {when!r}")
        labels = check_meta_filter("labels", labels)
        annotations = check_meta_filter("annotations", annotations)

        def decorate(fn: F) -> F:
            if self._running:
                raise RuntimeError(f"{_fn_id(fn)}: register handlers before the operator starts")
            handler_id = id or _fn_id(fn)
            if path is not None and id is None:
                handler_id = f"{handler_id}/{'.'.join(path)}"
            handlers = self._handlers.setdefault(key, [])
            if any(h.id == handler_id and h.cause == cause for h in handlers):
                raise ValueError(f"a {cause} handler with id {handler_id!r} is already registered")
            handlers.append(
                _Handler(
                    fn,
                    handler_id,
                    cause,
                    field=path,
                    when=when,
                    labels=labels,
                    annotations=annotations,
                    retries=retries,
                    backoff=backoff,
                    timeout=timeout,
                    optional=optional,
                )
            )
            return fn

        return decorate

    def on_create(
        self,
        kind: KindKey,
        *,
        id: str | None = None,
        when: Callable[..., Any] | None = None,
        labels: MetaFilter | None = None,
        annotations: MetaFilter | None = None,
        retries: int | None = None,
        backoff: float = DEFAULT_BACKOFF,
        timeout: float | None = None,
    ) -> Callable[[F], F]:
        """Run the function once when an object of ``kind`` is first seen (no last-handled
        state on it), until it succeeds or fails for good.

        ``when`` (called with the handler's keyword arguments), ``labels`` and ``annotations``
        (``{key: value}``: a string must equal, ``True`` or ``None`` means present, ``False``
        absent, a callable is called with the value) filter objects; ``retries`` (tries in all),
        ``backoff`` (seconds between tries after an error) and ``timeout`` (seconds since the
        first try) bound the retries. The return value, if not ``None``, is stored in the
        object's ``status`` under the handler's id (as kopf does).

        Example::

            @operator.on_create(("v1", "ConfigMap"), retries=3)
            async def created(body, patch, **_):
                patch["metadata"] = {"labels": {"seen": "yes"}}
        """
        return self._register(
            kind,
            "create",
            id=id,
            when=when,
            labels=labels,
            annotations=annotations,
            retries=retries,
            backoff=backoff,
            timeout=timeout,
        )

    def on_update(
        self,
        kind: KindKey,
        *,
        id: str | None = None,
        when: Callable[..., Any] | None = None,
        labels: MetaFilter | None = None,
        annotations: MetaFilter | None = None,
        retries: int | None = None,
        backoff: float = DEFAULT_BACKOFF,
        timeout: float | None = None,
    ) -> Callable[[F], F]:
        """Run the function once for each change of the object's essence (``spec``, labels,
        annotations, any top-level field but ``status``), with ``old``, ``new`` and ``diff``.

        Changes that arrive while the handlers of a previous one are still retrying are merged
        into it (level-based): those handlers then run again with the combined ``diff``.
        Options as :meth:`on_create`.

        Example::

            @operator.on_update(("v1", "ConfigMap"))
            def updated(old, new, diff, **_):
                print(diff)
        """
        return self._register(
            kind,
            "update",
            id=id,
            when=when,
            labels=labels,
            annotations=annotations,
            retries=retries,
            backoff=backoff,
            timeout=timeout,
        )

    def on_delete(
        self,
        kind: KindKey,
        *,
        id: str | None = None,
        when: Callable[..., Any] | None = None,
        labels: MetaFilter | None = None,
        annotations: MetaFilter | None = None,
        retries: int | None = None,
        backoff: float = DEFAULT_BACKOFF,
        timeout: float | None = None,
        optional: bool = False,
    ) -> Callable[[F], F]:
        """Run the function once when the object is being deleted.

        Unless ``optional=True``, the operator holds its finalizer on every object of
        ``kind`` so the object stays until its delete handlers are done (succeeded or failed for
        good); an optional one runs only if the object is still there when the operator sees
        the deletion (another finalizer holds it). Options as :meth:`on_create`.

        Example::

            @operator.on_delete(("v1", "ConfigMap"))
            async def deleted(name, **_):
                await release_resources(name)
        """
        return self._register(
            kind,
            "delete",
            id=id,
            when=when,
            labels=labels,
            annotations=annotations,
            retries=retries,
            backoff=backoff,
            timeout=timeout,
            optional=optional,
        )

    def on_resume(
        self,
        kind: KindKey,
        *,
        id: str | None = None,
        when: Callable[..., Any] | None = None,
        labels: MetaFilter | None = None,
        annotations: MetaFilter | None = None,
        retries: int | None = None,
        backoff: float = DEFAULT_BACKOFF,
        timeout: float | None = None,
    ) -> Callable[[F], F]:
        """Run the function once per operator run for each object it finds already handled by
        an earlier run (a last-handled state on it) and not being deleted; objects new to
        the operator get the create handlers instead. Its progress is kept in memory only (a
        restart resumes again). Options as :meth:`on_create`.

        Example::

            @operator.on_resume(("v1", "ConfigMap"))
            async def resumed(name, memo, **_):
                memo.seen = True
        """
        return self._register(
            kind,
            "resume",
            id=id,
            when=when,
            labels=labels,
            annotations=annotations,
            retries=retries,
            backoff=backoff,
            timeout=timeout,
        )

    def on_field(
        self,
        kind: KindKey,
        *,
        field: str | tuple[str, ...],
        id: str | None = None,
        when: Callable[..., Any] | None = None,
        labels: MetaFilter | None = None,
        annotations: MetaFilter | None = None,
        retries: int | None = None,
        backoff: float = DEFAULT_BACKOFF,
        timeout: float | None = None,
    ) -> Callable[[F], F]:
        """Run the function once for each change of one field (``"spec.size"``), on creation
        too (``old`` is ``None`` then): ``old`` and ``new`` are the field's values and ``diff``
        is relative to the field. Its id is ``<function>/<field>``. Options as
        :meth:`on_create`.

        Example::

            @operator.on_field(("v1", "ConfigMap"), field="data.mode")
            async def mode_changed(old, new, **_):
                print(f"mode {old} -> {new}")
        """
        return self._register(
            kind,
            "field",
            id=id,
            field=field,
            when=when,
            labels=labels,
            annotations=annotations,
            retries=retries,
            backoff=backoff,
            timeout=timeout,
        )

    def on_event(
        self,
        kind: KindKey,
        *,
        id: str | None = None,
        labels: MetaFilter | None = None,
        annotations: MetaFilter | None = None,
        when: Callable[..., Any] | None = None,
    ) -> Callable[[F], F]:
        """Call the function for every raw watch event of ``kind`` (``type`` is ``"ADDED"``,
        ``"MODIFIED"`` or ``"DELETED"``, ``event`` is ``{"type", "object"}``), in order, with no
        progress, retries nor stored state (kopf's ``on.event``): an error is logged and the
        event is not repeated. Relists deliver objects again as ``ADDED``. ``labels``,
        ``annotations`` and ``when`` filter the events by their object, as for the other
        handlers.

        Example::

            @operator.on_event(("v1", "Pod"))
            def pod_event(type, name, **_):
                print(type, name)
        """
        key = _kind(kind)
        labels = check_meta_filter("labels", labels)
        annotations = check_meta_filter("annotations", annotations)

        def decorate(fn: F) -> F:
            if self._running:
                raise RuntimeError(f"{_fn_id(fn)}: register handlers before the operator starts")
            handler = _Handler(
                fn, id or _fn_id(fn), "event", when=when, labels=labels, annotations=annotations
            )
            self._event_handlers.setdefault(key, []).append(handler)
            return fn

        return decorate

    def index(self, kind: KindKey, *, name: str | None = None) -> Callable[[F], F]:
        """Keep an :class:`Index` of every object of ``kind`` with the function (a plain ``def``
        returning ``{key: value}`` or a value), passed to every handler as the keyword argument
        ``name`` (default: the function's name). Duplicate names are a ``ValueError``.

        Example::

            @operator.index(("v1", "Pod"))
            def pods_by_app(labels, name, **_):
                return {labels.get("app"): name}
        """
        key = _kind(kind)

        def decorate(fn: F) -> F:
            if asyncio.iscoroutinefunction(fn):
                raise TypeError(f"index {_fn_id(fn)}: must be a plain def, not an async def")
            index_name = name or str(getattr(fn, "__name__", ""))
            if not index_name.isidentifier():
                raise ValueError(f"index name must be an identifier, not {index_name!r}")
            if index_name in self._indexes:
                raise ValueError(f"an index named {index_name!r} is already registered")
            self._indexes[index_name] = _IndexDef(fn, key, Index(index_name))
            return fn

        return decorate

    def indexes(self) -> dict[str, Index]:
        """Every index by name.

        Example: ``operator.indexes()["pods_by_app"]["web"]``.
        """
        return {n: d.index for n, d in self._indexes.items()}

    def on_startup(self) -> Callable[[F], F]:
        """Run the function (``logger``, ``memo``, ``client``, ``retry`` keyword arguments)
        when the operator starts, before any handler; a ``TemporaryError`` calls it again after
        its ``delay`` (as kopf retries startup activities), any other error stops the manager.

        Example::

            @operator.on_startup()
            async def connect(memo, **_):
                memo.db = await connect_db()
        """

        def decorate(fn: F) -> F:
            self._startup.append(fn)
            return fn

        return decorate

    def on_cleanup(self) -> Callable[[F], F]:
        """Run the function (``logger``, ``memo``, ``client``) when the operator stops, after
        its controllers and daemons stopped; an error is logged.

        Example::

            @operator.on_cleanup()
            async def disconnect(memo, **_):
                await memo.db.close()
        """

        def decorate(fn: F) -> F:
            self._cleanup.append(fn)
            return fn

        return decorate

    def on_probe(self, *, id: str | None = None) -> Callable[[F], F]:
        """Report the function's value (``logger``, ``memo``, ``client``) in :meth:`probe` and,
        with the manager's health probe server on, as the ``/healthz`` check
        ``operator-<name>`` (failing while a probe raises).

        Example::

            @operator.on_probe(id="objects")
            def count(memo, **_):
                return len(memo.objects)
        """

        def decorate(fn: F) -> F:
            probe_id = id or _fn_id(fn)
            if probe_id in self._probes:
                raise ValueError(f"a probe with id {probe_id!r} is already registered")
            if not self._probes and self._manager is not None:
                self._manager.add_healthz_check(f"operator-{self._name}", self._health)
            self._probes[probe_id] = fn
            return fn

        return decorate

    async def probe(self) -> dict[str, Any]:
        """Every probe's value by id (an error is raised, naming the probe).

        Example: ``values = await operator.probe()``.
        """
        values: dict[str, Any] = {}
        for probe_id, fn in self._probes.items():
            try:
                values[probe_id] = await call_handler(fn, **self._hook_kwargs())
            except Exception as err:
                raise RuntimeError(f"probe {probe_id!r} failed: {err}") from err
        return values

    async def _health(self) -> None:
        await self.probe()

    def daemon(self, kind: KindKey, **options: Any) -> Callable[[F], F]:
        """A per-object daemon (kopf's ``@kopf.daemon``): ``docs/operator-daemons.md`` gives its
        options (``initial_delay``, filters, ``requires_finalizer``, ``cancellation_timeout``,
        ``backoff``, ``retries``, ``timeout``).

        Example::

            @operator.daemon(("v1", "ConfigMap"))
            async def follow(stopped, **_):
                while not stopped.is_set():
                    await stopped.wait(10)
        """
        return self._daemons.daemon(kind, **options)

    def timer(self, kind: KindKey, *, interval: float, **options: Any) -> Callable[[F], F]:
        """A per-object timer (kopf's ``@kopf.timer``): every ``interval`` seconds of the
        operator's clock, with ``initial_delay``, ``idle`` and ``sharp`` as kopf
        (``docs/operator-daemons.md``).

        Example::

            @operator.timer(("v1", "ConfigMap"), interval=60)
            async def tick(name, **_):
                print(name)
        """
        return self._daemons.timer(kind, interval=interval, **options)

    # ------------------------------------------------------------------ admission

    def on_validate(
        self,
        kind: KindKey,
        *,
        id: str | None = None,
        operations: Sequence[str] | None = None,
        subresource: str | None = None,
        labels: MetaFilter | None = None,
        annotations: MetaFilter | None = None,
        when: Callable[..., Any] | None = None,
    ) -> Callable[[F], F]:
        """Validate admission requests for ``kind`` (kopf's ``@kopf.on.validate``), served by
        the manager's webhook server (:attr:`Manager.webhook_server
        <kubectrl.runtime.Manager.webhook_server>`; manifests from
        :func:`~kubectrl.webhook.webhook_configurations`).

        The function gets the object's keyword arguments and ``old``, ``new``, ``operation``,
        ``subresource``, ``dryrun``, ``userinfo``, ``warnings`` (a list to append to),
        ``memo`` (the operator's) and the indexes; it refuses the request by raising
        :class:`~kubectrl.webhook.Denied` (kopf's ``AdmissionError``; any other exception
        refuses it with code 500). ``operations`` (default all), ``subresource`` (default:
        the object itself only; ``"*"`` every one), ``labels`` and ``when`` filter.

        Example::

            @operator.on_validate(("kopf.dev/v1", "KopfExample"))
            def check(spec, **_):
                if spec.get("field") == "wrong":
                    raise Denied("spec.field must not be 'wrong'")
        """
        return self._admission_handler(
            kind, False, id, operations, subresource, labels, annotations, when
        )

    def on_mutate(
        self,
        kind: KindKey,
        *,
        id: str | None = None,
        operations: Sequence[str] | None = None,
        subresource: str | None = None,
        labels: MetaFilter | None = None,
        annotations: MetaFilter | None = None,
        when: Callable[..., Any] | None = None,
    ) -> Callable[[F], F]:
        """Mutate admission requests for ``kind`` (kopf's ``@kopf.on.mutate``): as
        :meth:`on_validate`, and the function fills ``patch`` (a merge patch); the patches of
        every matching handler are merged and answered as one JSON patch.

        Example::

            @operator.on_mutate(("kopf.dev/v1", "KopfExample"), operations=["CREATE"])
            def inject(patch, **_):
                patch["spec"] = {"injected": 123}
        """
        return self._admission_handler(
            kind, True, id, operations, subresource, labels, annotations, when
        )

    def _admission_handler(
        self,
        kind: Any,
        mutating: bool,
        id: str | None,
        operations: Sequence[str] | None,
        subresource: str | None,
        labels: MetaFilter | None,
        annotations: MetaFilter | None,
        when: Callable[..., Any] | None,
    ) -> Callable[[F], F]:
        key = _kind(kind)
        ops = check_operations(operations)
        labels = check_meta_filter("labels", labels)
        annotations = check_meta_filter("annotations", annotations)
        if when is not None and not callable(when):
            raise TypeError(f"when must be a callable, not {when!r}")

        def decorate(fn: F) -> F:
            dispatch = self._admission.get((key, mutating))
            if dispatch is None:
                dispatch = self._admission[(key, mutating)] = AdmissionDispatch(self, mutating)
                if self._manager is not None:
                    self._serve_admission(key, dispatch)
            handler_id = id or _fn_id(fn)
            if any(h.id == handler_id for h in dispatch.handlers):
                raise ValueError(f"an admission handler with id {handler_id!r} is registered")
            dispatch.handlers.append(
                AdmissionHandlerDef(fn, handler_id, ops, subresource, labels, annotations, when)
            )
            return fn

        return decorate

    def _serve_admission(self, kind: KindKey, dispatch: AdmissionDispatch) -> None:
        group, _, version = kind[0].rpartition("/")
        what = "mutate" if dispatch.mutating else "validate"
        self.manager.webhook_server.register(
            f"/{what}-{self._name}-{(group or 'core').replace('.', '-')}-{version}-"
            f"{kind[1].lower()}",
            dispatch,
            type="mutating" if dispatch.mutating else "validating",
            kind=kind,
            operations=("CREATE", "UPDATE", "DELETE"),
            name=f"{what[0]}{kind[1].lower()}-{version}.{self.domain}",
        )

    def admission_paths(self) -> dict[tuple[KindKey, str], str]:
        """The webhook paths the operator's admission handlers are served at, by ``(kind,
        "mutating" | "validating")`` (once attached).

        Example: ``operator.admission_paths()[(KEX, "validating")]``.
        """
        if self._manager is None:
            return {}
        found: dict[tuple[KindKey, str], str] = {}
        for registration in self.manager.webhook_server.registrations:
            for (kind, _mutating), dispatch in self._admission.items():
                if registration.handler is dispatch:
                    found[(kind, registration.type)] = registration.path
        return found

    # ------------------------------------------------------------------ events

    def event(self, obj: Mapping[str, Any], *, type: str, reason: str, message: str = "") -> None:
        """Post a Kubernetes Event about ``obj`` (kopf's ``kopf.event``): a core v1 Event, as
        kopf posts (``kopf/_core/engines/posting.py``), through the manager's core v1 event
        recorder (source component ``kubectrl.io/<name>``; client-go's correlation: repeats
        bump ``count``), from a handler (``async def`` or ``def`` in a thread) or anywhere while
        the operator runs.

        ``type`` is ``"Normal"`` or ``"Warning"`` (anything else is a ``ValueError``); events
        are queued and written in the background, as client-go's recorder does.

        Example::

            @operator.on_create(FOO)
            def created(body, **_):
                operator.event(body, type="Normal", reason="Created", message="all good")
        """
        if type not in ("Normal", "Warning"):
            raise ValueError(f"event type must be 'Normal' or 'Warning', not {type!r}")
        loop = self._loop
        if loop is None:
            raise RuntimeError(f"operator {self._name!r}: events are posted while it runs")
        try:
            running = asyncio.get_running_loop()
        except RuntimeError:
            running = None
        if running is loop:
            self._post(obj, type, reason, message)
        else:  # a plain def handler, in a thread
            loop.call_soon_threadsafe(self._post, obj, type, reason, message)

    def info(self, obj: Mapping[str, Any], *, reason: str, message: str = "") -> None:
        """A ``Normal`` event about ``obj`` (kopf's ``kopf.info``).

        Example: ``operator.info(body, reason="Ready", message="the database is up")``.
        """
        self.event(obj, type="Normal", reason=reason, message=message)

    def warn(self, obj: Mapping[str, Any], *, reason: str, message: str = "") -> None:
        """A ``Warning`` event about ``obj`` (kopf's ``kopf.warn``).

        Example: ``operator.warn(body, reason="Slow", message="the database is slow")``.
        """
        self.event(obj, type="Warning", reason=reason, message=message)

    def exception(
        self,
        obj: Mapping[str, Any],
        *,
        reason: str,
        message: str = "",
        exc: BaseException | None = None,
    ) -> None:
        """A ``Warning`` event about ``obj`` whose message ends with the exception (``exc``, or
        the one being handled) as ``ExceptionType: text`` (kopf's ``kopf.exception``, which
        posts type ``Error``; Kubernetes knows only ``Normal`` and ``Warning``).

        Example::

            try:
                connect()
            except OSError:
                operator.exception(body, reason="Unreachable", message="cannot connect:")
        """
        err = exc if exc is not None else sys.exc_info()[1]
        if err is not None:
            message = f"{message} {type(err).__name__}: {err}".strip()
        self.event(obj, type="Warning", reason=reason, message=message)

    def _post(self, obj: Mapping[str, Any], type: str, reason: str, message: str) -> None:
        if self._recorder is None:
            self._recorder = self.manager.event_recorder(f"kubectrl.io/{self._name}", api=CORE_V1)
        self._recorder.event(obj, type, reason, message)

    # ------------------------------------------------------------------ lifecycle

    def set_leader_fence(self, fence: Callable[[], bool] | None) -> None:
        """The manager's leader fence, passed on to the operator's controllers."""
        self._fence = fence
        for controller in self._controllers.values():
            controller.set_leader_fence(fence)

    def _kinds(self) -> list[KindKey]:
        kinds: dict[KindKey, None] = {}
        for kind in self._handlers:  # event handlers and indexes need no controller
            kinds.setdefault(kind, None)
        for watcher in self._watchers:
            for kind in sorted(watcher.kinds()):
                kinds.setdefault(kind, None)
        return list(kinds)

    def _hook_kwargs(self) -> dict[str, Any]:
        return {"logger": log, "memo": self.memo, "client": self.client, **self.indexes()}

    async def start(self) -> None:
        """Run the startup hooks, then start one controller per kind (the manager calls it)."""
        self._running = True
        self._loop = asyncio.get_running_loop()
        for fn in self._startup:
            try:
                await self._start_hook(fn)
            except Exception as err:
                where = f"in the startup hook {_fn_id(fn)} of operator {self._name!r}"
                log.error("%s: %s: %s", where, type(err).__name__, err)
                add_note = getattr(err, "add_note", None)  # Python 3.11+
                if add_note is not None:
                    add_note(where)
                raise
        factory = self.manager.informer_factory
        for index_name, definition in self._indexes.items():
            informer = await factory.get_informer(definition.kind)
            self._registrations.append(
                (informer, informer.add_handler(**self._index_handler(index_name, definition)))
            )
            informer.start()
        for kind, handlers in self._event_handlers.items():
            informer = await factory.get_informer(kind)
            queue: asyncio.Queue[tuple[str, Any]] = asyncio.Queue()
            self._registrations.append((informer, informer.add_handler(**_event_feed(queue))))
            informer.start()
            self._pumps.append(asyncio.ensure_future(self._pump(queue, handlers)))
        timeout = self.manager.options.cache_sync_timeout
        for informer, _ in self._registrations:
            await informer.wait_for_cache_sync(timeout)
        for kind in self._kinds():
            controller = Controller(
                f"{self._name}-{kind[1].lower()}-{kind[0].replace('/', '-')}",
                self._reconciler(kind),
                sources=[KindSource(factory, kind)],
                clock=self.manager.clock,
                registry=self.manager.registry,
            )
            controller.set_leader_fence(self._fence)
            self._controllers[kind] = controller
            await controller.start()

    async def _start_hook(self, fn: Callable[..., Any]) -> None:
        """Call a startup hook until it returns; a ``TemporaryError`` retries it after its
        ``delay`` on the manager's clock (``retry`` counts the tries), anything else raises."""
        retry = 0
        while True:
            try:
                await call_handler(fn, **self._hook_kwargs(), retry=retry)
            except TemporaryError as err:
                log.warning(
                    "startup hook %s of operator %r failed temporarily (try %d): %s; "
                    "retrying in %g s",
                    _fn_id(fn), self._name, retry + 1, err, err.delay,
                )  # fmt: skip
                retry += 1
                await self.manager.clock.sleep(err.delay)
            else:
                return

    async def stop(self, timeout: float | None = 30.0) -> None:
        """Stop the controllers, then the watchers (daemons), then run the cleanup hooks."""
        await asyncio.gather(*(c.stop(timeout) for c in self._controllers.values()))
        for task in self._pumps:
            task.cancel()
        await asyncio.gather(*self._pumps, return_exceptions=True)
        for informer, registration in self._registrations:
            informer.remove_handler(registration)
        self._registrations.clear()
        self._pumps.clear()
        for watcher in self._watchers:
            try:
                await watcher.stop()
            except Exception:
                log.exception("operator %s: stopping watcher %r failed", self._name, watcher)
        for fn in self._cleanup:
            try:
                await call_handler(fn, **self._hook_kwargs())
            except Exception:
                log.exception("operator %s: cleanup %s failed", self._name, _fn_id(fn))
        self._controllers.clear()
        self._running = False

    def _index_handler(self, index_name: str, definition: _IndexDef) -> dict[str, Any]:
        def put(obj: Any) -> None:
            meta = obj.get("metadata") or {}
            obj_key = (meta.get("namespace") or "", meta.get("name") or "")
            try:
                value = call_handler_sync(definition.fn, **object_kwargs(obj))
            except Exception:
                log.exception("index %s failed on %s; its entries are dropped", index_name, obj_key)
                value = None
                definition.index._put(obj_key, None)
                return
            if value is None:
                definition.index._put(obj_key, None)
            elif isinstance(value, Mapping):
                definition.index._put(obj_key, value)
            else:
                definition.index._put(obj_key, {None: value})

        def drop(obj: Any) -> None:
            obj = getattr(obj, "obj", obj)
            meta = obj.get("metadata") or {}
            definition.index._put((meta.get("namespace") or "", meta.get("name") or ""), None)

        def add(obj: Any, _initial: bool) -> None:
            put(obj)

        def update(_old: Any, new: Any) -> None:
            put(new)

        return {"on_add": add, "on_update": update, "on_delete": drop}

    async def _pump(self, queue: asyncio.Queue[tuple[str, Any]], handlers: list[_Handler]) -> None:
        while True:
            event_type, obj = await queue.get()
            for handler in handlers:
                if not self._matches(handler, obj):
                    continue
                arguments = {
                    **object_kwargs(obj),
                    **self.indexes(),
                    "type": event_type,
                    "event": {"type": event_type, "object": obj},
                    "memo": self.memo_for(_kind_of(obj), _key_of(obj)),
                    "patch": {},
                }
                try:
                    if handler.when is not None and not await call_handler(
                        handler.when, **arguments
                    ):
                        continue
                    await call_handler(handler.fn, **arguments)
                except asyncio.CancelledError:
                    raise
                except Exception:
                    log.exception("event handler %s failed on a %s event", handler.id, event_type)

    # ------------------------------------------------------------------ dispatch

    def _reconciler(self, kind: KindKey) -> Callable[[Request], Awaitable[Result | None]]:
        async def reconcile(request: Request) -> Result | None:
            return await self._reconcile(kind, request)

        reconcile.__qualname__ = f"Operator({self._name}).reconcile[{kind[1]}]"
        return reconcile

    def memo_for(self, kind: KindKey, key: ObjectKey) -> SimpleNamespace:
        """The per-object ``memo`` handlers (and daemons) of one object share, kept in memory
        until the object is gone.

        Example: ``operator.memo_for(("v1", "ConfigMap"), ObjectKey("default", "a")).count``.
        """
        return self._memos.setdefault((kind, key), SimpleNamespace())

    def _forget(self, kind: KindKey, key: ObjectKey) -> None:
        self._memos.pop((kind, key), None)
        self._resume.pop((kind, key), None)

    def _needs_finalizer(self, kind: KindKey, obj: Mapping[str, Any]) -> bool:
        for handler in self._handlers.get(kind, ()):
            if handler.cause == "delete" and not handler.optional and self._matches(handler, obj):
                return True
        return any(kind in w.kinds() and w.needs_finalizer(kind, obj) for w in self._watchers)

    def _matches(self, handler: _Handler, obj: Mapping[str, Any]) -> bool:
        meta = obj.get("metadata") or {}
        return meta_matches(handler.labels, meta.get("labels") or {}) and meta_matches(
            handler.annotations, meta.get("annotations") or {}
        )

    async def _reconcile(self, kind: KindKey, request: Request) -> Result | None:
        key = ObjectKey(request.namespace, request.name)
        try:
            obj: dict[str, Any] = await self.client.get(
                kind, request.name, namespace=request.namespace or None
            )
        except NotFoundError:
            for watcher in self._watchers:
                if kind in watcher.kinds():
                    await watcher.gone(kind, key, None)
            self._forget(kind, key)
            return None
        meta = obj.get("metadata") or {}
        if meta.get("deletionTimestamp"):
            return await self._deleting(kind, key, obj)
        finalizers = list(meta.get("finalizers") or [])
        wanted = self._needs_finalizer(kind, obj)
        if wanted != (self.finalizer in finalizers):
            if wanted:
                finalizers.append(self.finalizer)
            else:
                finalizers.remove(self.finalizer)
            obj = await self._write(
                kind,
                obj,
                {
                    "metadata": {
                        "finalizers": finalizers,
                        "resourceVersion": meta["resourceVersion"],
                    }
                },
            )
        for watcher in self._watchers:
            if kind in watcher.kinds():
                await watcher.seen(kind, obj)
        return await self._changing(kind, key, obj)

    def _stored(self, obj: Mapping[str, Any], annotation: str) -> Any:
        text = ((obj.get("metadata") or {}).get("annotations") or {}).get(annotation)
        if text is None:
            return None
        try:
            return json.loads(text)
        except ValueError:
            log.error(
                "%s: annotation %s is not JSON; ignoring it (%r)",
                _key_of(obj),
                annotation,
                text[:80],
            )
            return None

    async def _changing(self, kind: KindKey, key: ObjectKey, obj: dict[str, Any]) -> Result | None:
        handlers = self._handlers.get(kind, [])
        if not any(h.cause in ("create", "update", "field", "resume") for h in handlers):
            return None  # nothing follows changes of this kind: nothing to store on it
        new = essence(obj, self.domain)
        last = self._stored(obj, self.last_handled_annotation)
        annotations: dict[str, Any] = {}
        patch: dict[str, Any] = {}
        delay: float | None = None
        # Resume handlers: once per operator run, for objects an earlier run has handled.
        if (kind, key) not in self._resume:
            self._resume[(kind, key)] = {} if last is not None else None
        resume_records = self._resume[(kind, key)]
        resumes = [h for h in handlers if h.cause == "resume"]
        if resume_records is not None and resumes:
            outcome = await self._run(
                kind,
                key,
                obj,
                resumes,
                resume_records,
                patch,
                {"old": None, "new": None, "diff": ()},
            )
            if outcome.done:
                self._resume[(kind, key)] = None
            else:
                delay = outcome.delay
        cause = "create" if last is None else ("update" if new != last else None)
        if cause is None:
            if self._stored(obj, self.progress_annotation) is not None:
                annotations[self.progress_annotation] = None  # a change undone meanwhile
        else:
            chosen: list[_Handler] = []
            extra: dict[str, dict[str, Any]] = {}
            for handler in handlers:
                if handler.cause == cause:
                    chosen.append(handler)
                elif handler.cause == "field" and handler.field is not None:
                    before, after = resolve(last, handler.field), resolve(new, handler.field)
                    if before != after:
                        chosen.append(handler)
                        extra[handler.id] = {
                            "old": before,
                            "new": after,
                            "diff": diff(before, after),
                        }
            progress = self._stored(obj, self.progress_annotation)
            stamp = digest(new)
            if (
                not isinstance(progress, dict)
                or progress.get("cause") != cause
                or progress.get("digest") != stamp
            ):
                progress = {"cause": cause, "digest": stamp, "handlers": {}}
            records: dict[str, Any] = progress.setdefault("handlers", {})
            before_run = json.dumps(records, sort_keys=True)
            outcome = await self._run(
                kind, key, obj, chosen, records, patch,
                {"old": last, "new": new, "diff": diff(last, new)}, extra,
            )  # fmt: skip
            # The handlers' own patches are part of the change they handled, not a new one
            # (kopf stores the essence with the patch applied): the stored essence and the
            # progress' digest are those of the object as this pass leaves it.
            after = essence(_merge_patched(obj, patch), self.domain)
            progress["digest"] = digest(after)
            if outcome.done:
                annotations[self.last_handled_annotation] = json.dumps(
                    after, sort_keys=True, separators=(",", ":")
                )
                if self._stored(obj, self.progress_annotation) is not None:
                    annotations[self.progress_annotation] = None
            else:
                if json.dumps(records, sort_keys=True) != before_run:
                    annotations[self.progress_annotation] = json.dumps(
                        progress, sort_keys=True, separators=(",", ":")
                    )
                delay = outcome.delay if delay is None else min(delay, outcome.delay or delay)
        if annotations:
            patch = _merge(patch, {"metadata": {"annotations": annotations}})
        if patch:
            await self._write(kind, obj, patch)
        return Result(requeue_after=delay) if delay is not None else None

    async def _deleting(self, kind: KindKey, key: ObjectKey, obj: dict[str, Any]) -> Result | None:
        meta = obj.get("metadata") or {}
        finalizers = list(meta.get("finalizers") or [])
        holding = self.finalizer in finalizers
        handlers = [
            h
            for h in self._handlers.get(kind, [])
            if h.cause == "delete" and self._matches(h, obj) and (holding or h.optional)
        ]
        patch: dict[str, Any] = {}
        progress = self._stored(obj, self.progress_annotation)
        if not isinstance(progress, dict) or progress.get("cause") != "delete":
            progress = {"cause": "delete", "digest": "", "handlers": {}}
        records: dict[str, Any] = progress.setdefault("handlers", {})
        before_run = json.dumps(records, sort_keys=True)
        last = self._stored(obj, self.last_handled_annotation)
        outcome = await self._run(
            kind,
            key,
            obj,
            handlers,
            records,
            patch,
            {"old": last, "new": None, "diff": diff(last, None)},
        )
        if not outcome.done:
            if holding and json.dumps(records, sort_keys=True) != before_run:
                patch = _merge(
                    patch,
                    {
                        "metadata": {
                            "annotations": {
                                self.progress_annotation: json.dumps(
                                    progress, sort_keys=True, separators=(",", ":")
                                )
                            }
                        }
                    },
                )
            if patch and holding:
                await self._write(kind, obj, patch)
            return Result(requeue_after=outcome.delay or 0.0)
        stopped = True
        for watcher in self._watchers:
            if kind in watcher.kinds():
                stopped = await watcher.gone(kind, key, obj) and stopped
        if not stopped:
            if patch and holding:
                await self._write(kind, obj, patch)
            return Result(requeue_after=GONE_REQUEUE_AFTER)
        if holding:
            finalizers.remove(self.finalizer)
            patch = _merge(
                patch,
                {
                    "metadata": {
                        "finalizers": finalizers,
                        "resourceVersion": meta["resourceVersion"],
                    }
                },
            )
            await self._write(kind, obj, patch)
        self._forget(kind, key)
        return None

    async def _run(
        self,
        kind: KindKey,
        key: ObjectKey,
        obj: dict[str, Any],
        handlers: list[_Handler],
        records: dict[str, Any],
        patch: dict[str, Any],
        cause_kwargs: dict[str, Any],
        extra: Mapping[str, dict[str, Any]] | None = None,
        prefix: str = "",
    ) -> _Outcome:
        """Run every handler of ``handlers`` that is due and not done; record each outcome in
        ``records`` and each handler's patch (and result) in ``patch``."""
        outcome = _Outcome()
        wall = self.manager.clock.wall()
        base = object_kwargs(obj)
        for handler in handlers:
            if not self._matches(handler, obj):
                continue
            handler_id = f"{prefix}{handler.id}"
            record = records.setdefault(handler_id, {"started": iso(wall), "retries": 0})
            if record.get("success") or record.get("failure"):
                continue
            started = parse_iso(record["started"])
            kwargs = {
                **base,
                **self.indexes(),
                **cause_kwargs,
                **((extra or {}).get(handler.id) or {}),
                "memo": self.memo_for(kind, key),
                "retry": int(record.get("retries", 0)),
                "started": started,
                "runtime": wall - started,
            }
            if handler.when is not None and not await call_handler(handler.when, **kwargs):
                records.pop(handler_id, None)
                continue
            delayed = record.get("delayed")
            if delayed is not None:
                remaining = (parse_iso(delayed) - wall).total_seconds()
                if remaining > 0:
                    outcome.wait(remaining)
                    continue
            if handler.timeout is not None and (wall - started).total_seconds() >= handler.timeout:
                self._fail(record, HandlerTimeoutError(
                    f"handler {handler_id} timed out after {handler.timeout:g} s"
                ))  # fmt: skip
                continue
            own_patch: dict[str, Any] = {}
            subs: list[_Handler] = []
            token = _subhandlers.set(subs)
            logger = base["logger"]
            try:
                result = await call_handler(handler.fn, **kwargs, patch=own_patch)
            except PermanentError as err:
                logger.error("handler %s failed permanently: %s", handler_id, err)
                self._fail(record, err)
                _merge_into(patch, own_patch)
                continue
            except TemporaryError as err:
                logger.warning("handler %s failed temporarily: %s", handler_id, err)
                self._retry(handler, handler_id, record, err, err.delay, wall, outcome)
                _merge_into(patch, own_patch)
                continue
            except asyncio.CancelledError:
                raise
            except Exception as err:
                logger.exception("handler %s failed with an exception; will retry", handler_id)
                self._retry(handler, handler_id, record, err, handler.backoff, wall, outcome)
                _merge_into(patch, own_patch)
                continue
            finally:
                _subhandlers.reset(token)
            _merge_into(patch, own_patch)
            if subs:
                sub_outcome = await self._run(
                    kind, key, obj, subs, records, patch, cause_kwargs, None, f"{handler_id}/"
                )
                failed = [
                    f"{handler_id}/{s.id}"
                    for s in subs
                    if records.get(f"{handler_id}/{s.id}", {}).get("failure")
                ]
                if not sub_outcome.done:
                    # Called again (to register its sub-handlers) when the first one is due.
                    wait = sub_outcome.delay or 0.0
                    record["delayed"] = iso(wall + datetime.timedelta(seconds=wait))
                    outcome.wait(wait)
                    continue
                if failed:
                    self._fail(record, PermanentError(f"sub-handlers failed: {', '.join(failed)}"))
                    continue
            record["success"] = True
            record.pop("delayed", None)
            record.pop("message", None)
            if result is not None:
                _merge_into(patch, {"status": {handler.id: result}})
        return outcome

    def _fail(self, record: dict[str, Any], err: BaseException) -> None:
        record["failure"] = True
        record.pop("delayed", None)
        record["message"] = f"{type(err).__name__}: {err}"

    def _retry(
        self,
        handler: _Handler,
        handler_id: str,
        record: dict[str, Any],
        err: BaseException,
        delay: float,
        wall: datetime.datetime,
        outcome: _Outcome,
    ) -> None:
        record["retries"] = int(record.get("retries", 0)) + 1
        if handler.retries is not None and record["retries"] >= handler.retries:
            self._fail(
                record,
                HandlerRetriesError(
                    f"handler {handler_id} failed {record['retries']} times; last error: "
                    f"{type(err).__name__}: {err}"
                ),
            )
            return
        record["delayed"] = iso(wall + datetime.timedelta(seconds=delay))
        record["message"] = f"{type(err).__name__}: {err}"
        outcome.wait(delay)

    async def _write(self, kind: KindKey, obj: Mapping[str, Any], patch: dict[str, Any]) -> Any:
        """Merge-patch the object (and its status subresource with ``patch["status"]``)."""
        meta = obj.get("metadata") or {}
        name, namespace = str(meta.get("name") or ""), meta.get("namespace") or None
        status = patch.pop("status", None)
        written: Any = obj
        if patch:
            written = await self.client.patch(kind, name, patch, namespace=namespace)
        if status is not None:
            try:
                written = await self.client.status().patch(
                    kind, name, {"status": status}, namespace=namespace
                )
            except NotFoundError:  # no status subresource: status is a plain field
                written = await self.client.patch(
                    kind, name, {"status": status}, namespace=namespace
                )
                if not written.get("status"):
                    log.warning(
                        "%s %s/%s has no status field: the server dropped the status the "
                        "handlers wrote (results and patch['status']): %s",
                        kind[1], namespace or "", name, json.dumps(status)[:200],
                    )  # fmt: skip
        return written

    def __repr__(self) -> str:
        kinds = ", ".join(f"{v}/{k}" for v, k in self._kinds())
        return f"<Operator {self._name} kinds=[{kinds}]>"


def _merge_patched(obj: Mapping[str, Any], patch: Mapping[str, Any]) -> dict[str, Any]:
    """``obj`` with the JSON merge patch ``patch`` applied (RFC 7386: ``None`` removes)."""
    result: dict[str, Any] = copy.deepcopy(dict(obj))
    for key, value in patch.items():
        if value is None:
            result.pop(key, None)
        elif isinstance(value, Mapping):
            current = result.get(key)
            result[key] = _merge_patched(current if isinstance(current, Mapping) else {}, value)
        else:
            result[key] = copy.deepcopy(value)
    return result


def _merge(base: dict[str, Any], extra: Mapping[str, Any]) -> dict[str, Any]:
    result = dict(base)
    _merge_into(result, extra)
    return result


def _merge_into(base: dict[str, Any], extra: Mapping[str, Any]) -> None:
    for key, value in extra.items():
        if isinstance(value, Mapping) and isinstance(base.get(key), dict):
            _merge_into(base[key], value)
        elif isinstance(value, Mapping):
            base[key] = {}
            _merge_into(base[key], value)
        else:
            base[key] = value


def _event_feed(queue: asyncio.Queue[tuple[str, Any]]) -> dict[str, Any]:
    """Informer callbacks putting raw watch events on ``queue``, in order."""

    def on_add(obj: Any, _initial: bool) -> None:
        queue.put_nowait(("ADDED", obj))

    def on_update(_old: Any, new: Any) -> None:
        queue.put_nowait(("MODIFIED", new))

    def on_delete(obj: Any) -> None:
        queue.put_nowait(("DELETED", getattr(obj, "obj", obj)))

    return {"on_add": on_add, "on_update": on_update, "on_delete": on_delete}


def _key_of(obj: Mapping[str, Any]) -> ObjectKey:
    meta = obj.get("metadata") or {}
    return ObjectKey(meta.get("namespace") or "", meta.get("name") or "")


def _kind_of(obj: Mapping[str, Any]) -> KindKey:
    return (str(obj.get("apiVersion") or ""), str(obj.get("kind") or ""))
