"""The API core: requests in, answers out, over a storage, a registry and a watch hub.

:class:`APICore` routes a :class:`~kubectrl.apiserver._router.Request`, serves its verb (get,
list, watch, create, update, patch, apply, delete, deletecollection, on the main resource or
its ``status`` / ``scale`` subresource) and answers a
:class:`~kubectrl.apiserver._router.Reply` or, for a watch, a
:class:`~kubectrl.apiserver._endpoints.watch.WatchStream`. It speaks no HTTP library: who
serves it turns its requests and answers into their own (``FakeAPI`` through an httpx
transport).

Everything happens under one lock in plain functions (no ``await`` inside), so callers on
several threads and event loops can share one core.
"""

from __future__ import annotations

import base64
import bisect
import contextlib
import copy
import json
import re
import threading
from collections.abc import Mapping
from typing import Any

from kubectrl._internal.clock import Clock
from kubectrl.apiserver._endpoints.scale import scale_of, scale_paths
from kubectrl.apiserver._endpoints.selection import Selection
from kubectrl.apiserver._endpoints.watch import WatchHub, WatchStream
from kubectrl.apiserver._patch import apply as _apply
from kubectrl.apiserver._patch import patches
from kubectrl.apiserver._registry.store import ObjectStore
from kubectrl.apiserver._resources import versions
from kubectrl.apiserver._resources.info import ResourceInfo
from kubectrl.apiserver._resources.objects import (
    MAX_DEPTH,
    MAX_OBJECT_BYTES,
    MAX_REQUEST_BYTES,
    NotPlainError,
    assign,
    check_plain,
    decode_json,
    decode_yaml,
    encoded_size,
    now_string,
)
from kubectrl.apiserver._resources.registry import Registry
from kubectrl.apiserver._router import Reply, Request, Route, route
from kubectrl.apiserver._schema import field_validation, gotypes
from kubectrl.apiserver._schema.served import render
from kubectrl.apiserver._status import (
    MODIFIED,
    FeatureNotImplementedError,
    StatusError,
    bad_request,
    conflict,
    invalid,
    not_found,
)
from kubectrl.apiserver._storage.memory import MODIFIED as CHANGE_MODIFIED
from kubectrl.apiserver._storage.memory import (
    Change,
    CompactedError,
    Key,
    MemoryStorage,
    Resource,
    Storage,
)
from kubectrl.apiserver._strategies import builtin_resources

__all__ = ["APICore"]

_CONTINUE_TOO_OLD = (
    "The provided continue parameter is too old to display a consistent list result. You can "
    "start a new list without the continue parameter, or use the continue token in this "
    "response to retrieve the remainder of the results. Continuing with the provided token "
    "results in an inconsistent list - objects that were created, modified, or deleted between "
    "the time the first chunk was returned and now may show up in the list."
)
_APPLY = "application/apply-patch+yaml"
_PATCH_TYPES = (
    "the body of the request was in an unknown format - accepted media types include: "
    "application/json-patch+json, application/merge-patch+json, application/apply-patch+yaml"
)


class APICore:
    """The served resources and their objects, and the request handling over them.

    ``storage`` keeps the objects (a new :class:`~kubectrl.apiserver._storage.memory.MemoryStorage`
    by default); ``garbage_collection`` runs the collector's work after each write that calls
    for it.
    """

    def __init__(
        self,
        clock: Clock,
        *,
        garbage_collection: bool = True,
        storage: Storage | None = None,
        version: str | None = None,
    ) -> None:
        #: The Kubernetes minor imitated (``"1.37"``): ``/version``, the built-in schemas and
        #: the behaviours that changed between releases follow it. ``None``: the default.
        self.version = versions.normalize(version)
        self.clock = clock
        self.lock = threading.RLock()
        self.storage: Storage = storage if storage is not None else MemoryStorage()
        self.registry = Registry(builtin_resources(self.version))
        self.hub = WatchHub(self.storage, self.lock, clock)
        self.store = ObjectStore(
            self.storage, self.registry, self.hub, clock, garbage_collection=garbage_collection
        )
        #: Each resource's keys now, sorted (lists pick their page by bisection), built by the
        #: first list after a create or a delete of that resource (updates keep the keys).
        self._sorted_keys: dict[Resource, list[Key]] = {}
        self.storage.subscribe(self._forget_keys)

    def _forget_keys(self, change: Change) -> None:
        if change.type != CHANGE_MODIFIED:
            self._sorted_keys.pop(change.resource, None)

    def __repr__(self) -> str:
        return f"APICore({self.storage!r})"

    @staticmethod
    def render(
        info: ResourceInfo, version: str | None, obj: Mapping[str, Any], metadata_only: bool = False
    ) -> dict[str, Any]:
        """A copy of a stored object as served at ``version`` (the first one by default)."""
        return render(info, version, obj, metadata_only)

    # ------------------------------------------------------------------ requests

    @property
    def server_version(self) -> str:
        """The release whose tables this core follows (``"v1.37.2"``)."""
        return versions.release(self.version)

    def serving(self) -> contextlib.AbstractContextManager[None]:
        """A block run as this core's release (what :meth:`route` and :meth:`serve` do; a
        caller writing to :attr:`store` directly wraps the write in it)."""
        return versions.serving(self.version)

    def route(self, request: Request) -> Route | Reply:
        """The route of a resource request, or the answer to a discovery request."""
        with self.serving():
            return route(self.registry, request)

    def handle(self, request: Request) -> Reply | WatchStream:
        """Route and serve a request; a failure is its ``Status`` reply."""
        try:
            found = self.route(request)
            if isinstance(found, Reply):
                return found
            return self.serve(found, request)
        except StatusError as err:
            return Reply(err.code, err.body, warnings=err.warnings)

    def serve(self, found: Route, request: Request) -> Reply | WatchStream:
        """Serve a routed request (raises :class:`~kubectrl.apiserver._status.StatusError`).

        The reply's body shares values with the stored objects: encode it, never change it.
        """
        with self.serving():
            return self._serve_request(found, request)

    def _serve_request(self, found: Route, request: Request) -> Reply | WatchStream:
        if found.verb in ("list", "watch"):
            _check_int_params(request.params)
        if request.body and len(request.body) > MAX_REQUEST_BYTES:
            raise StatusError.make(
                413,
                f"Request entity too large: limit is {MAX_REQUEST_BYTES}",
                reason="RequestEntityTooLarge",
            )
        if found.verb == "watch":
            return self.hub.open(
                found.info,
                found.version,
                found.namespace,
                request.params,
                metadata_only=request.metadata_only,
            )
        with self.lock:
            self._warnings: list[str] = []
            self.store.admission.warnings = self._warnings
            try:
                code, out = self._serve(found, request)
            except StatusError as err:
                # a refused write keeps the warnings admission gave before (policies' Warn)
                err.warnings = tuple(_header_safe(text) for text in self._warnings)
                raise
            warnings = tuple(_header_safe(text) for text in self._warnings)
        return Reply(code, out, warnings=warnings)

    def _validate_fields(
        self,
        info: ResourceInfo,
        version: str,
        obj: Any,
        mode: str,
        patch: bool = False,
        raw: bytes | None = None,
    ) -> None:
        # fieldValidation: Strict refuses unknown (and repeated) fields, Warn (the default)
        # warns, Ignore not. ``raw``: the JSON body, where a repeated key is still seen.
        if mode == "Ignore":
            return
        fields = field_validation.unknown_fields(info, version, obj, raw)
        if not fields:
            return
        if mode == "Strict":
            if patch:
                raise field_validation.patch_error(obj, fields)
            raise field_validation.strict_error(info, version, fields)
        self._warnings.extend(field_validation.warnings(fields))

    def _serve(self, found: Route, request: Request) -> tuple[int, Any]:
        info, version, ns, sub = found.info, found.version, found.namespace, found.subresource
        name = str(found.name)
        params = request.params
        dry_run = params.get("dryRun") == "All"
        metadata_only = request.metadata_only
        manager = (
            params.get("fieldManager") or request.headers.get("user-agent", "unknown").split("/")[0]
        )
        if found.verb == "get":
            obj = self.store.get(info, ns, name)
            if sub == "scale":
                return 200, scale_of(info, obj)
            return 200, render(info, version, obj, metadata_only, shared=True)
        if found.verb == "list":
            return 200, self._list(info, version, ns, params, metadata_only)
        _check_dry_run(found.verb, params)
        content_type = request.content_type
        body = _decode(request.body, content_type, info.kind, version)
        if found.verb in ("create", "update") and isinstance(body, dict):
            raw = _json_body(request)
            # a key given twice is decoded into the same Go field (objects merge)
            merged = gotypes.with_repeated_keys(info, version, raw) if raw else None
            if isinstance(merged, dict) and merged != body:
                body = merged
        validation = ""
        if found.verb in ("create", "update", "patch"):
            validation = field_validation.check_mode(params, found.verb)
        if found.verb == "create":
            if not isinstance(body, dict):
                raise bad_request("the body of the request must be a JSON object")
            _check_type(info, version, body)
            _check_custom_metadata(info, version, body)
            self._validate_fields(info, version, body, validation, raw=_json_body(request))
            ns = _body_namespace(info, ns, body)
            _check_size(body)
            created = self.store.create(info, version, ns, body, manager=manager, dry_run=dry_run)
            return 201, render(info, version, created, shared=True)
        if found.verb == "update":
            if not isinstance(body, dict):
                raise bad_request("the body of the request must be a JSON object")
            if sub == "scale":
                return 200, self._update_scale(info, version, ns, name, body, dry_run)
            _check_type(info, version, body)
            _check_custom_metadata(info, version, body)
            self._validate_fields(info, version, body, validation, raw=_json_body(request))
            _body_namespace(info, ns, body)
            _check_size(body)
            body_name = (body.get("metadata") or {}).get("name")
            if body_name and body_name != name:
                raise bad_request(
                    f"the name of the object ({body_name}) does "
                    f"not match the name on the URL ({name})"
                )
            updated = self.store.update(
                info, version, ns, name, body, sub=sub, manager=manager, dry_run=dry_run
            )
            return 200, render(info, version, updated, shared=True)
        if found.verb == "patch":
            if content_type == _APPLY:
                return self._apply(info, version, ns, name, sub, body, params, dry_run)
            return 200, self._patch(
                info, version, ns, name, sub, content_type, body, manager, dry_run, validation
            )
        options = body if isinstance(body, dict) else {}
        given = options.get("dryRun")
        if given not in (None, [], ["All"]):
            raise _unsupported_dry_run("DeleteOptions", given)
        if found.verb == "delete":
            return self.store.delete(
                info, version, ns, name, options, dry_run or options.get("dryRun") == ["All"]
            )
        dry_run = dry_run or options.get("dryRun") == ["All"]
        return 200, self._delete_collection(info, version, ns, params, options, dry_run)

    # ------------------------------------------------------------------ reads

    def select(
        self,
        info: ResourceInfo,
        ns: str | None,
        params: Mapping[str, str],
        at: int | None = None,
    ) -> list[dict[str, Any]]:
        """The objects a list asks for, sorted by key (as they were at revision ``at``)."""
        return self._page(info, ns, params, at)[0]

    def _page(
        self,
        info: ResourceInfo,
        ns: str | None,
        params: Mapping[str, str],
        at: int | None = None,
        after: tuple[str, str] | None = None,
        limit: int = 0,
    ) -> tuple[list[dict[str, Any]], int]:
        """The objects a list asks for whose keys come after ``after`` (all if ``None``),
        sorted by key, as they were at revision ``at``; with ``limit``, only the first
        ``limit`` + 1 of them (one more than a page: there are more). And how many objects
        come after ``after`` in all when no selector is given (``-1`` with one: the page is
        found without looking further, and ``remainingItemCount`` is not sent then).

        The objects now (``at`` ``None``, or no write since ``at``) are found by bisecting
        the resource's sorted keys, kept until a create or a delete: sorting every key and
        testing every object for one page of 100 of 10,000 was most of a list's cost."""
        selection = Selection(info, ns, params)
        if at is not None and at >= self.storage.revision:
            at = None  # nothing written since: the objects now
        try:
            stored = self.storage.range(info.key, at)
        except CompactedError:
            raise StatusError.make(
                410, "The resourceVersion for the provided list is too old.", reason="Expired"
            ) from None
        if at is None:
            keys = self._sorted_keys.get(info.key)
            if keys is None or len(keys) != len(stored):
                keys = self._sorted_keys[info.key] = sorted(stored)
            lo, hi = 0, len(keys)
            if ns is not None:
                lo = bisect.bisect_left(keys, (ns, ""))
                hi = bisect.bisect_left(keys, (ns + "\0", ""))
            if after is not None:
                lo = max(lo, bisect.bisect_right(keys, after))
        else:  # an older revision: the keys of that state
            keys = sorted(
                k for k in stored if (ns is None or k[0] == ns) and (after is None or k > after)
            )
            lo, hi = 0, len(keys)
        if selection.labels.empty and not selection.fields.terms:
            end = hi if limit <= 0 else min(hi, lo + limit + 1)
            return [stored[k] for k in keys[lo:end]], max(hi - lo, 0)
        items: list[dict[str, Any]] = []
        for i in range(lo, hi):
            obj = stored[keys[i]]
            if selection.labels.matches_object(obj) and selection.fields.matches(obj):
                items.append(obj)
                if limit > 0 and len(items) > limit:
                    break
        return items, -1

    def _list(
        self,
        info: ResourceInfo,
        version: str,
        ns: str | None,
        params: Mapping[str, str],
        metadata_only: bool,
    ) -> dict[str, Any]:
        list_rv = self.storage.revision
        token = params.get("continue")
        requested = params.get("resourceVersion") or ""
        if token:
            try:
                state = json.loads(base64.urlsafe_b64decode(token.encode()))
                start_ns, start_name = state["start"]
                list_rv, start = int(state["rv"]), (str(start_ns), str(start_name))
            except (ValueError, KeyError, TypeError):
                raise bad_request("continue key is not valid: invalid continue token") from None
            if list_rv < self.storage.compacted:
                raise StatusError.make(410, _CONTINUE_TOO_OLD, reason="Expired")
            after: tuple[str, str] | None = start
            at: int | None = list_rv
        elif requested not in ("", "0") and params.get("resourceVersionMatch") == "Exact":
            try:
                list_rv = int(requested)
            except ValueError:
                raise bad_request(f"invalid resource version: {requested}") from None
            after, at = None, list_rv
        else:
            after, at = None, None
        meta: dict[str, Any] = {"resourceVersion": str(list_rv)}
        limit = int(params.get("limit") or 0)
        items, matching = self._page(info, ns, params, at, after, max(limit, 0))
        if limit > 0 and len(items) > limit:
            last = items[limit - 1]["metadata"]
            meta["continue"] = base64.urlsafe_b64encode(
                json.dumps(
                    {"rv": list_rv, "start": [last.get("namespace", ""), last["name"]]}
                ).encode()
            ).decode()
            if not params.get("labelSelector") and not params.get("fieldSelector"):
                meta["remainingItemCount"] = matching - limit
            items = items[:limit]
        rendered = [render(info, version, o, metadata_only, shared=True) for o in items]
        if not info.crd and not metadata_only:
            for item in rendered:
                item.pop("apiVersion", None)
                item.pop("kind", None)
        if metadata_only:
            return {
                "kind": "PartialObjectMetadataList",
                "apiVersion": "meta.k8s.io/v1",
                "metadata": meta,
                "items": rendered,
            }
        return {
            "kind": info.list_kind,
            "apiVersion": info.api_version(version),
            "metadata": meta,
            "items": rendered,
        }

    # ------------------------------------------------------------------ writes

    def _update_scale(
        self,
        info: ResourceInfo,
        version: str,
        ns: str | None,
        name: str,
        body: Mapping[str, Any],
        dry_run: bool,
    ) -> dict[str, Any]:
        old = self.store.get(info, ns, name)
        rv = (body.get("metadata") or {}).get("resourceVersion")
        if rv and str(rv) != old["metadata"]["resourceVersion"]:
            raise conflict(info.plural, info.group, name, MODIFIED)
        replicas = (body.get("spec") or {}).get("replicas")
        new = copy.deepcopy(old)
        spec_path, _, _ = scale_paths(info)
        assign(new, spec_path, replicas)
        updated = self.store.update(
            info, version, ns, name, new, sub="", manager=None, dry_run=dry_run
        )  # the apiserver records no field manager for a scale write
        return scale_of(info, updated)

    def _patch(
        self,
        info: ResourceInfo,
        version: str,
        ns: str | None,
        name: str,
        sub: str,
        content_type: str,
        patch: Any,
        manager: str,
        dry_run: bool,
        validation: str = "",
    ) -> dict[str, Any]:
        old = self.store.get(info, ns, name)
        if sub == "scale":
            current: Any = scale_of(info, old)
        else:
            # each patch function copies what it patches
            current = render(info, version, old, shared=True)
        if content_type == "application/merge-patch+json":
            new = patches.merge_patch(current, patch)
        elif content_type == "application/json-patch+json":
            new = patches.json_patch(current, patch)
        elif content_type == "application/strategic-merge-patch+json":
            if info.crd:
                raise StatusError.make(415, _PATCH_TYPES)
            new = patches.strategic_merge_patch(current, patch)
        else:
            raise StatusError.make(
                415,
                _PATCH_TYPES + ("" if info.crd else ", application/strategic-merge-patch+json"),
            )
        if not isinstance(new, dict):
            raise bad_request("the patched object is not a JSON object")
        _check_result(new)
        if sub == "scale":
            return self._update_scale(info, version, ns, name, new, dry_run)
        self._validate_fields(info, version, new, validation, patch=True)
        new = gotypes.decode_patched(info, version, new)
        patched_meta = new.get("metadata") or {}
        if patched_meta.get("name", name) != name:
            raise bad_request(
                f"the name of the object ({patched_meta.get('name')}) "
                f"does not match the name on the URL ({name})"
            )
        _check_custom_metadata(info, version, new)
        _check_size(new)
        updated = self.store.update(
            info, version, ns, name, new, sub=sub, manager=manager, dry_run=dry_run
        )
        return render(info, version, updated, shared=True)

    def _apply(
        self,
        info: ResourceInfo,
        version: str,
        ns: str | None,
        name: str,
        sub: str,
        patch: Any,
        params: Mapping[str, str],
        dry_run: bool,
    ) -> tuple[int, dict[str, Any]]:
        """The answer to an apply: 201 with the object when it created it, else 200 (as
        handlers/patch.go answers, by ``wasCreated``)."""
        if not isinstance(patch, dict):
            raise bad_request("the body of an apply patch must be an object")
        manager = params.get("fieldManager")
        if not manager:
            raise bad_request(
                'PatchOptions.meta.k8s.io "" is invalid: fieldManager: '
                "Required value: is required for apply patch"
            )
        if sub == "scale":
            raise FeatureNotImplementedError("server-side apply to the scale subresource")
        _check_type(info, version, patch)
        _check_custom_metadata(info, version, patch)
        if not patch.get("apiVersion") or not patch.get("kind"):
            raise bad_request("apiVersion and kind must be set in an apply patch")
        meta = patch.get("metadata") or {}
        if meta.get("name") and meta["name"] != name:
            raise bad_request(
                f"the name of the object ({meta['name']}) "
                f"does not match the name on the URL ({name})"
            )
        force = params.get("force") in ("true", "1")
        api_version = info.api_version(version)
        now = now_string(self.clock)
        existing = self.storage.get(info.key, (ns or "", name))
        if existing is None:
            if sub:
                raise not_found(info.plural, info.group, name)
            body = _apply.server_side_apply(
                None,
                patch,
                manager=manager,
                force=force,
                api_version=api_version,
                time=now,
                has_status=info.status,
            )
            body.setdefault("metadata", {})["name"] = name
            managed = body["metadata"].pop("managedFields", None)
            _check_size(body)
            created = self.store.create(
                info, version, ns, body, manager=None, dry_run=dry_run, managed_fields=managed
            )
            return 201, render(info, version, created, shared=True)
        rv = meta.get("resourceVersion")
        if rv and str(rv) != existing["metadata"]["resourceVersion"]:
            raise conflict(info.plural, info.group, name, MODIFIED)
        current = render(info, version, existing)
        result = _apply.server_side_apply(
            current,
            patch,
            manager=manager,
            force=force,
            api_version=api_version,
            time=now,
            subresource=sub,
            has_status=info.status,
        )
        _check_result(result)
        _check_size(result)
        updated = self.store.update(
            info,
            version,
            ns,
            name,
            result,
            sub=sub,
            manager=manager,
            dry_run=dry_run,
            precondition_rv=False,
            applied=True,
        )
        return 200, render(info, version, updated, shared=True)

    def _delete_collection(
        self,
        info: ResourceInfo,
        version: str,
        ns: str | None,
        params: Mapping[str, str],
        options: Mapping[str, Any],
        dry_run: bool,
    ) -> dict[str, Any]:
        deleted = []
        for obj in self.select(info, ns, params):
            meta = obj["metadata"]
            self.store.delete(info, version, meta.get("namespace"), meta["name"], options, dry_run)
            item = render(info, version, obj, shared=True)
            if not info.crd:  # typed list items carry no kind/apiVersion
                item.pop("kind", None)
                item.pop("apiVersion", None)
            deleted.append(item)
        return {
            "kind": info.list_kind,
            "apiVersion": info.api_version(version),
            "metadata": {"resourceVersion": str(self.storage.revision)},
            "items": deleted,
        }


def _json_body(request: Request) -> bytes | None:
    """The body of a JSON request as sent (``None`` for another media type)."""
    return request.body if request.content_type == "application/json" else None


def _decode(raw: bytes, content_type: str, kind: str, version: str) -> Any:
    if not raw:
        return None
    if content_type == _APPLY:
        return decode_yaml(raw)
    return decode_json(raw, kind, version)


def _check_result(obj: Any) -> None:
    """A patch or apply result stays plain JSON within :data:`MAX_DEPTH` (its parts were)."""
    try:
        check_plain(obj)
    except NotPlainError as err:
        if err.problem != "depth":
            raise
        raise bad_request(
            f"the patched object nests deeper than {MAX_DEPTH} (invalid character "
            f"'{err.detail}' exceeded max depth)"
        ) from None


def _check_size(obj: Mapping[str, Any]) -> None:
    # etcd refuses a write over its --max-request-bytes; the apiserver passes on its error
    if encoded_size(obj) > MAX_OBJECT_BYTES:
        raise StatusError(
            500,
            {
                "kind": "Status",
                "apiVersion": "v1",
                "metadata": {},
                "status": "Failure",
                "message": "etcdserver: request is too large",
                "code": 500,
            },
        )


_OPTIONS = {
    "create": "CreateOptions",
    "update": "UpdateOptions",
    "patch": "PatchOptions",
    "delete": "DeleteOptions",
    "deletecollection": "DeleteOptions",
}


def _unsupported_dry_run(options: str, given: Any) -> StatusError:
    values = given if isinstance(given, list) else [given]
    message = (
        f'Unsupported value: {json.dumps(values, separators=(",", ":"))}: supported values: "All"'
    )
    return invalid(options, "meta.k8s.io", "", [("FieldValueNotSupported", "dryRun", message)])


def _check_dry_run(verb: str, params: Mapping[str, str]) -> None:
    # apimachinery ValidateDryRun: "All" is the one value; anything else is a 422 and nothing
    # is written
    if "dryRun" in params and params["dryRun"] != "All":
        raise _unsupported_dry_run(_OPTIONS[verb], params["dryRun"])


def _check_int_params(params: Mapping[str, str]) -> None:
    # limit and timeoutSeconds are int64 query parameters: strconv.ParseInt's errors are 400s
    for key in ("limit", "timeoutSeconds"):
        value = params.get(key)
        if not value:
            continue
        if not _INT.fullmatch(value):
            raise bad_request(f'strconv.ParseInt: parsing "{value}": invalid syntax')
        if not -(2**63) <= int(value) < 2**63:
            raise bad_request(f'strconv.ParseInt: parsing "{value}": value out of range')


_INT = re.compile(r"[+-]?[0-9]+")
_GO_TYPES = {bool: "bool", int: "number", float: "number", list: "array", dict: "object"}


def _check_custom_metadata(info: ResourceInfo, version: str, body: Mapping[str, Any]) -> None:
    """A custom resource's labels and annotations decode into ObjectMeta's
    ``map[string]string``: another value type is the decoder's 400; a null is an empty
    string."""
    if not info.crd:
        return
    meta = body.get("metadata")
    if not isinstance(meta, dict):
        return
    for field in ("labels", "annotations"):
        values = meta.get(field)
        if not isinstance(values, dict):
            continue
        for key, value in values.items():
            if value is None:
                values[key] = ""
            elif not isinstance(value, str):
                go_type = _GO_TYPES.get(type(value), "number")
                raise bad_request(
                    f'{info.kind} in version "{version}" cannot be handled as a {info.kind}: '
                    f"json: cannot unmarshal {go_type} into Go struct field "
                    f"ObjectMeta.{field} of type string"
                )


def _header_safe(text: str) -> str:
    """A warning's text fit for a header: control characters as Go's ``%q`` writes them
    (a CR or LF in a header ends it, or the connection)."""
    return "".join(
        c if c.isprintable() else json.dumps(c)[1:-1].replace("\\u00", "\\x") for c in text
    )


def _check_type(info: ResourceInfo, version: str, body: Mapping[str, Any]) -> None:
    expected = info.api_version(version)
    given = body.get("apiVersion")
    if given and given != expected:
        raise bad_request(
            f"the API version in the data ({given}) does not "
            f"match the expected API version ({expected})"
        )
    kind = body.get("kind")
    if kind and kind != info.kind:
        raise bad_request(
            f"the kind in the data ({kind}) does not match the expected kind ({info.kind})"
        )


def _body_namespace(info: ResourceInfo, ns: str | None, body: dict[str, Any]) -> str | None:
    meta = body.setdefault("metadata", {})
    if not isinstance(meta, dict):
        raise bad_request("metadata must be an object")
    if not info.namespaced:
        meta.pop("namespace", None)
        return None
    given = meta.get("namespace")
    if given and ns and given != ns:
        raise bad_request(
            "the namespace of the provided object does not match the namespace sent on the request"
        )
    return ns or given
