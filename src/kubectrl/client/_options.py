"""The options of the client verbs, each family declared once as a typed bundle.

kube-rs passes a verb's options as one struct (``PostParams``, ``PatchParams``,
``DeleteParams``), controller-runtime as option types (``client.DryRunAll``,
``client.FieldOwner``). Here a bundle is a :class:`~typing.TypedDict` that a verb takes as its
keywords (``**options: Unpack[PatchOptions]``): calls read as before
(``client.patch(..., namespace="ns", dry_run=True)``), mypy refuses a misspelt option or a
wrong type, and each option is spelled once, below; at run time :func:`check_options` refuses an
unknown keyword by name, as Python does for a function's keywords.

The bundles are built from small pieces, so one option has one declaration:

===================== =========================================================================
bundle                 options
===================== =========================================================================
:class:`GetOptions`    ``namespace``, ``resource_version``, ``subresource``
:class:`ListOptions`   ``namespace``, ``label_selector``, ``field_selector``, ``matching_fields``,
                       ``limit``, ``resource_version``, ``resource_version_match``,
                       ``timeout_seconds``, ``metadata_only``
:class:`PageOptions`   :class:`ListOptions` and ``shard_selector``, ``continue_``
:class:`WatchOptions`  a list's but ``limit`` and ``matching_fields``; ``shard_selector``,
                       ``allow_watch_bookmarks``, ``send_initial_events``, ``stall_timeout``
:class:`WriteOptions`  ``namespace``, ``field_manager``, ``dry_run``, ``field_validation``
:class:`ApplyOptions`  :class:`WriteOptions` and ``force``
:class:`PatchOptions`  :class:`ApplyOptions` and ``patch_type``
:class:`MergeOptions`  ``field_manager``, ``dry_run``, ``field_validation``, ``optimistic_lock``
:class:`DeleteOptions` ``namespace``, ``propagation_policy``, ``grace_period_seconds``,
                       ``preconditions``, ``dry_run``
:class:`DeleteAllOptions` ``namespace``, ``label_selector``, ``field_selector``,
                       ``propagation_policy``, ``grace_period_seconds``, ``dry_run``
===================== =========================================================================

What each option means:

- ``namespace``: the namespace of a namespaced kind (a write defaults to the object's
  ``metadata.namespace``; a list or watch without one covers every namespace).
- ``resource_version`` (reads): read at that version (``"0"``: any version the server has);
  ``resource_version_match``: ``"NotOlderThan"`` or ``"Exact"``.
- ``label_selector``: any :data:`~kubectrl.labels.LabelSelectorLike` (``"app=web,tier in
  (a,b)"``, a mapping of equalities, a ``metav1.LabelSelector`` dict, a
  :class:`~kubectrl.labels.LabelSelector`); ``field_selector``: the API's field selector text;
  ``matching_fields``: exact field values (controller-runtime's ``MatchingFields``), sent as a
  field selector, or served by a field index on the cache-backed client.
- ``limit``: items per page; ``continue_``: the token of the page to start from;
  ``shard_selector``: the ``shardSelector`` of a sharded list (:class:`kubectrl.cache.ShardSelector`
  as text); ``timeout_seconds``: the server's bound on the request; ``metadata_only``:
  ``PartialObjectMetadata`` items (tuple kinds only).
- ``field_manager``: the manager recorded in ``managedFields`` (default: the client's
  ``ClientConfig.field_owner``); ``dry_run``: ``dryRun=All``, validated, defaulted and admitted
  but not stored; ``field_validation``: ``"Strict"`` refuses fields the kind does not declare
  (a create or update answers 400, a patch 422), ``"Warn"`` drops them with a warning each (the
  server's default), ``"Ignore"`` drops them silently.
- ``force`` (server-side apply): take over fields another manager owns; ``patch_type``: a
  :class:`~kubectrl.client.PatchType` (merge by default); ``optimistic_lock``: a merge patch
  carries the original's ``resourceVersion`` (``MergeFromWithOptimisticLock``).
- ``propagation_policy``: ``"Foreground"``, ``"Background"`` or ``"Orphan"``;
  ``grace_period_seconds``: seconds before a pod is killed; ``preconditions``: uid and/or
  resourceVersion a delete must match (:class:`~kubectrl.client.Preconditions`).

Example::

    >>> query_params({"dry_run": True, "field_validation": "Strict"})
    {'dryRun': 'All', 'fieldValidation': 'Strict'}
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, Literal

from typing_extensions import TypedDict

from kubectrl._internal.checks import check_matching_fields, check_options
from kubectrl.client._types import PatchType, Preconditions
from kubectrl.labels import LabelSelectorLike, selector_string

__all__ = [
    "FIELD_VALIDATIONS",
    "ApplyOptions",
    "DeleteAllOptions",
    "DeleteOptions",
    "FieldValidation",
    "GetOptions",
    "ListOptions",
    "MergeOptions",
    "PageOptions",
    "PatchOptions",
    "WatchOptions",
    "WriteOptions",
    "check_matching_fields",
    "check_options",
    "delete_body",
    "fields_selector",
    "query_params",
]

#: ``fieldValidation`` values: ``"Strict"``, ``"Warn"`` or ``"Ignore"`` (``None``: the server's
#: default, ``Warn``).
FieldValidation = Literal["Strict", "Warn", "Ignore"]

FIELD_VALIDATIONS: tuple[str, ...] = ("Strict", "Warn", "Ignore")


# ------------------------------------------------------------------------------ the pieces


class _Scope(TypedDict, total=False):
    namespace: str | None


class _AtVersion(TypedDict, total=False):
    resource_version: str | None


class _Labels(_Scope, total=False):
    label_selector: LabelSelectorLike


class _Selection(_Labels, total=False):
    field_selector: str | None


class _FieldMatch(TypedDict, total=False):
    matching_fields: Mapping[str, str] | None


class _DryRun(TypedDict, total=False):
    dry_run: bool


class _Writing(_DryRun, total=False):
    field_manager: str | None
    field_validation: FieldValidation | None


class _Deleting(_DryRun, total=False):
    propagation_policy: str | None
    grace_period_seconds: int | None


# ----------------------------------------------------------------------------- the bundles


class GetOptions(_Scope, _AtVersion, total=False):
    """``get``'s options: ``namespace``, ``resource_version`` and ``subresource`` (read a
    subresource such as ``"scale"``: a dict)."""

    subresource: str


class _Listing(_Selection, _AtVersion, total=False):
    resource_version_match: str | None
    timeout_seconds: int | None
    metadata_only: bool


class _Sharding(TypedDict, total=False):
    shard_selector: str | None


class ListOptions(_Listing, _FieldMatch, total=False):
    """``list``'s and ``list_items``' options (the module's table says what each means)."""

    limit: int | None


class PageOptions(ListOptions, _Sharding, total=False):
    """``list_pages``' options: :class:`ListOptions`, ``shard_selector`` and ``continue_``."""

    continue_: str | None


class WatchOptions(_Listing, _Sharding, total=False):
    """``watch``'s options: those of a list (but ``limit`` and ``matching_fields``),
    ``shard_selector``, and ``allow_watch_bookmarks`` (default ``True``),
    ``send_initial_events`` (a streaming list: needs ``resource_version_match="NotOlderThan"``)
    and ``stall_timeout`` (seconds without a byte before
    :class:`~kubectrl.errors.WatchStalledError`; by default 90 s with bookmarks on, else
    ``timeout_seconds + 30`` or off)."""

    allow_watch_bookmarks: bool
    send_initial_events: bool | None
    stall_timeout: float | None


class WriteOptions(_Scope, _Writing, total=False):
    """``create``'s and ``update``'s options: ``namespace``, ``field_manager``, ``dry_run``,
    ``field_validation``."""


class ApplyOptions(WriteOptions, total=False):
    """Server-side apply's options: :class:`WriteOptions` and ``force``."""

    force: bool


class PatchOptions(ApplyOptions, total=False):
    """``patch``'s options: :class:`ApplyOptions` (``force`` only with ``PatchType.APPLY``)
    and ``patch_type``."""

    patch_type: PatchType | str


class MergeOptions(_Writing, total=False):
    """``patch_merge_from``'s options (the object names its namespace): ``field_manager``,
    ``dry_run``, ``field_validation`` and ``optimistic_lock``."""

    optimistic_lock: bool


class DeleteOptions(_Scope, _Deleting, total=False):
    """``delete``'s options: ``namespace``, ``propagation_policy``,
    ``grace_period_seconds``, ``preconditions``, ``dry_run``."""

    preconditions: Preconditions | Mapping[str, str] | None


class DeleteAllOptions(_Selection, _Deleting, total=False):
    """``delete_collection``'s options: ``namespace``, ``label_selector``,
    ``field_selector``, ``propagation_policy``, ``grace_period_seconds``, ``dry_run``."""


def _escape_field_value(value: str) -> str:
    # apimachinery's fields.EscapeValue: a selector value escapes \, "," and "=".
    return value.replace("\\", "\\\\").replace(",", "\\,").replace("=", "\\=")


def fields_selector(
    matching_fields: Mapping[str, str] | None, field_selector: str | None
) -> str | None:
    """The ``fieldSelector`` a list sends: ``field_selector`` as given, or ``matching_fields``
    as ``k=v,k2=v2`` (values escaped, as controller-runtime's ``MatchingFields`` renders it).

    An empty or absent ``matching_fields`` selects nothing; both at once is a ``ValueError``.

    Example::

        >>> print(fields_selector({"metadata.name": "a,b", "status.phase": "Running"}, None))
        metadata.name=a\\,b,status.phase=Running
    """
    if matching_fields is None:
        return field_selector
    checked = check_matching_fields(matching_fields, field_selector)
    return ",".join(f"{k}={_escape_field_value(v)}" for k, v in checked.items()) or None


def delete_body(options: Mapping[str, Any]) -> dict[str, Any]:
    """The ``DeleteOptions`` body of a delete's options.

    Example::

        >>> delete_body({"propagation_policy": "Foreground", "dry_run": True})["dryRun"]
        ['All']
    """
    body: dict[str, Any] = {"apiVersion": "v1", "kind": "DeleteOptions"}
    if options.get("propagation_policy"):
        body["propagationPolicy"] = options["propagation_policy"]
    if options.get("grace_period_seconds") is not None:
        body["gracePeriodSeconds"] = options["grace_period_seconds"]
    preconditions = options.get("preconditions")
    if preconditions is not None:
        pre = (
            preconditions.to_dict()
            if isinstance(preconditions, Preconditions)
            else dict(preconditions)
        )
        if pre:
            body["preconditions"] = pre
    if options.get("dry_run"):
        body["dryRun"] = ["All"]
    return body


def _field_validation(value: Any) -> str | None:
    if value is not None and value not in FIELD_VALIDATIONS:
        raise ValueError(
            f"field_validation must be one of {', '.join(FIELD_VALIDATIONS)} or None, not {value!r}"
        )
    return value  # type: ignore[no-any-return]


#: Options sent as query parameters: the parameter and how its value is written.
_QUERY: dict[str, tuple[str, Callable[[Any], Any]]] = {
    "resource_version": ("resourceVersion", lambda v: v),
    "resource_version_match": ("resourceVersionMatch", lambda v: v),
    "label_selector": ("labelSelector", selector_string),
    "field_selector": ("fieldSelector", lambda v: v),
    "shard_selector": ("shardSelector", lambda v: v or None),
    "limit": ("limit", lambda v: v),
    "continue_": ("continue", lambda v: v),
    "timeout_seconds": ("timeoutSeconds", lambda v: v),
    "field_manager": ("fieldManager", lambda v: v),
    "force": ("force", lambda v: True if v else None),
    "allow_watch_bookmarks": ("allowWatchBookmarks", lambda v: True if v else None),
    "send_initial_events": ("sendInitialEvents", lambda v: v),
    "dry_run": ("dryRun", lambda v: "All" if v else None),
    "field_validation": ("fieldValidation", _field_validation),
}


def query_params(options: Mapping[str, Any], **defaults: Any) -> dict[str, Any]:
    """The query parameters of ``options`` (those that travel as parameters; ``None`` values
    are left for the request to drop); ``defaults`` fill options not given (the client's
    ``field_manager``). A bad ``field_validation`` is a ``ValueError`` before anything is sent.

    Example::

        >>> query_params({"label_selector": {"app": "web"}, "limit": 5})
        {'labelSelector': 'app=web', 'limit': 5}
    """
    merged = dict(options)
    for key, value in defaults.items():
        if merged.get(key) is None:
            merged[key] = value
    params: dict[str, Any] = {}
    for key, value in merged.items():
        spec = _QUERY.get(key)
        if spec is not None:
            param, write = spec
            params[param] = write(value)
    if merged.get("matching_fields") is not None:
        params["fieldSelector"] = fields_selector(
            merged["matching_fields"], merged.get("field_selector")
        )
    return params
