"""Status conditions: the :class:`Condition` type and the helpers every operator writes by hand.

The functions are k8s.io/apimachinery's ``pkg/api/meta/conditions.go``:
:func:`set_status_condition` (``SetStatusCondition``), :func:`find_status_condition`,
:func:`remove_status_condition`, :func:`is_status_condition_true`,
:func:`is_status_condition_false` and :func:`is_status_condition_present_and_equal`, with the same
semantics:

* setting a condition whose type is not in the list appends a copy of it, its
  ``lastTransitionTime`` set to now when it has none;
* setting a condition whose type is in the list updates that entry in place: ``status``,
  ``reason``, ``message`` and ``observedGeneration`` take the new values, and
  ``lastTransitionTime`` changes only when the status does (to the new condition's time if it has
  one, else to now);
* the return value says whether anything changed, so a reconciler writes the status only then.

They work on three spellings of a condition list, chosen by what the list holds:

* :class:`Condition` models (``foo.status.conditions`` of a
  :class:`~kubectrl.resources.CustomResource` whose status declares
  ``conditions: Conditions = Field(default_factory=list)``);
* ``kubernetes.client.models.V1Condition`` models;
* plain dicts as the API server sends them (``obj["status"]["conditions"]``), with camelCase keys
  and ``lastTransitionTime`` an RFC 3339 string; a missing key is Go's zero value (``""``, ``0``).

:class:`Condition` is ``metav1.Condition`` as a pydantic model, validated as the API server
validates the Go type (``type`` a qualified name, optionally prefixed by a DNS subdomain, of at
most 316 characters; ``status`` ``"True"``, ``"False"`` or ``"Unknown"``;
``observed_generation`` >= 0; ``last_transition_time`` a timezone-aware date-time, kept in UTC
and cut to whole seconds as ``metav1.Time`` writes it; ``reason``
1-1024 characters of :data:`CONDITION_REASON_PATTERN`; ``message`` at most 32768 characters).
All its fields but ``observed_generation`` are required, as in the Go type's CRD schema (and in
``V1Condition``). :data:`Conditions` is the type of a status' ``conditions`` field.

"Now" is the ``now=`` argument: a timezone-aware :class:`~datetime.datetime`, a kubectrl
:class:`~kubectrl.Clock` (its ``wall()`` is read), or ``None`` for the machine's UTC time.
It is cut to whole seconds, the precision of ``metav1.Time`` on the wire.

Example::

    >>> import datetime
    >>> now = datetime.datetime(2026, 1, 1, tzinfo=datetime.timezone.utc)
    >>> conditions = []
    >>> set_status_condition(conditions, {"type": "Ready", "status": "False",
    ...                                   "reason": "Deploying", "message": ""}, now=now)
    True
    >>> conditions[0]["lastTransitionTime"]
    '2026-01-01T00:00:00Z'
    >>> set_status_condition(conditions, {"type": "Ready", "status": "False",
    ...                                   "reason": "Deploying", "message": ""}, now=now)
    False
    >>> is_status_condition_false(conditions, "Ready")
    True

The same with models::

    >>> from kubectrl.resources import ResourceModel
    >>> class FooStatus(ResourceModel):
    ...     conditions: Conditions = Field(default_factory=list)
    >>> status = FooStatus()
    >>> set_status_condition(status.conditions, Condition(
    ...     type="Ready", status="True", reason="Deployed", message="3 replicas up",
    ...     observed_generation=2, last_transition_time=now))
    True
    >>> status.model_dump(by_alias=True, mode="json")["conditions"][0]["lastTransitionTime"]
    '2026-01-01T00:00:00Z'
"""

from __future__ import annotations

import datetime
import re
from collections.abc import Iterable, Mapping, MutableMapping, MutableSequence
from typing import TYPE_CHECKING, Annotated, Any, Literal, TypeVar

from pydantic import BeforeValidator, Field

from kubectrl import resources as _resources
from kubectrl._internal import clock as _clock

if TYPE_CHECKING:
    from kubernetes.client.models import V1Condition

__all__ = [
    "CONDITION_REASON_PATTERN",
    "CONDITION_TYPE_PATTERN",
    "Condition",
    "ConditionStatus",
    "Conditions",
    "find_status_condition",
    "is_status_condition_false",
    "is_status_condition_present_and_equal",
    "is_status_condition_true",
    "remove_status_condition",
    "set_status_condition",
]

#: The pattern of :attr:`Condition.type`: a qualified name, optionally prefixed by a DNS subdomain
#: and a slash (``Ready``, ``example.com/Ready``); the kubebuilder marker of ``metav1.Condition``.
CONDITION_TYPE_PATTERN = (
    r"^([a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*/)?"
    r"(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])$"
)
#: The pattern of :attr:`Condition.reason`: a CamelCase-ish identifier (``MinimumReplicasUp``).
CONDITION_REASON_PATTERN = r"^[A-Za-z]([A-Za-z0-9_,:]*[A-Za-z0-9_])?$"

ConditionStatus = Literal["True", "False", "Unknown"]
"""The status of a condition: ``"True"``, ``"False"`` or ``"Unknown"`` (strings, not booleans)."""


def _whole_seconds(value: datetime.datetime) -> datetime.datetime:
    """``value`` in UTC, cut to whole seconds: what metav1.Time's MarshalJSON writes
    (k8s.io/apimachinery/pkg/apis/meta/v1/time.go: ``t.UTC()`` in ``time.RFC3339``)."""
    return value.astimezone(datetime.timezone.utc).replace(microsecond=0)


def _six_digit_fraction(value: str) -> str:
    """``value`` with ``Z`` as ``+00:00`` and its fraction of a second (any length in RFC 3339)
    cut or padded to the six digits Python 3.10's ``fromisoformat`` reads.

    Example::

        >>> _six_digit_fraction("2026-01-01T14:00:00.5Z")
        '2026-01-01T14:00:00.500000+00:00'
    """
    value = value.replace("Z", "+00:00").replace("z", "+00:00")
    match = _FRACTION.search(value)
    if match is None:
        return value
    digits = (match.group(1) + "000000")[:6]
    return f"{value[: match.start()]}.{digits}{value[match.end() :]}"


#: The fraction of a second of an RFC 3339 time, before its offset.
_FRACTION = re.compile(r"\.(\d+)(?=[+-]\d{2}:\d{2}$|$)")


def _aware_time(value: Any) -> Any:
    # metav1.Time parses RFC 3339, which always carries an offset: a timestamp without one (or a
    # number, which pydantic would take as seconds since the epoch) is refused, not guessed.
    # The value kept is what a Go controller sends: UTC, whole seconds.
    if isinstance(value, datetime.datetime):
        if value.tzinfo is None:
            raise ValueError("lastTransitionTime must be timezone-aware (RFC 3339 has an offset)")
        return _whole_seconds(value)
    if isinstance(value, str):
        try:
            parsed = datetime.datetime.fromisoformat(_six_digit_fraction(value))
        except ValueError as err:
            raise ValueError(f"lastTransitionTime {value!r} is not an RFC 3339 date-time") from err
        if parsed.tzinfo is None:
            raise ValueError(
                f"lastTransitionTime {value!r} has no offset (RFC 3339 needs one, e.g. 'Z')"
            )
        return _whole_seconds(parsed)
    raise ValueError(
        f"lastTransitionTime must be an RFC 3339 string or a datetime, not {type(value).__name__}"
    )


class Condition(_resources.ResourceModel):
    """Condition contains details for one aspect of the current state of an object.

    The type of metav1.Condition, with the validation of its CRD schema: all fields but
    observedGeneration are required; the message may be empty, the reason may not.
    """

    type: Annotated[str, Field(max_length=316, pattern=CONDITION_TYPE_PATTERN)]
    """The condition's type, CamelCase or prefixed by a domain (``example.com/Ready``)."""
    status: ConditionStatus
    """``True``, ``False`` or ``Unknown``."""
    observed_generation: Annotated[int, _resources.Format("int64"), Field(ge=0)] | None = None
    """The ``metadata.generation`` the condition was computed from."""
    last_transition_time: Annotated[datetime.datetime, BeforeValidator(_aware_time)]
    """When the status last changed."""
    reason: Annotated[str, Field(min_length=1, max_length=1024, pattern=CONDITION_REASON_PATTERN)]
    """A CamelCase identifier of why the condition is in its status; never empty."""
    message: Annotated[str, Field(max_length=32768)]
    """A human-readable account of the last transition; may be empty."""


Conditions = Annotated[list[Condition], _resources.ListType("map", keys=("type",))]
"""A status' ``conditions`` field: a list of :class:`Condition` keyed by ``type``.

The list is a map list (``+listType=map``, ``+listMapKey=type``), as upstream types declare
their conditions, so server-side apply merges conditions by type.

Example::

    >>> from kubectrl.resources import ResourceModel
    >>> class FooStatus(ResourceModel):
    ...     conditions: Conditions = Field(default_factory=list)
"""

_C = TypeVar("_C", Condition, "V1Condition", "dict[str, Any]")

# --- reading a condition, whatever its spelling -------------------------------------------------

_ATTRIBUTES = {
    "type": "type",
    "status": "status",
    "reason": "reason",
    "message": "message",
    "observedGeneration": "observed_generation",
    "lastTransitionTime": "last_transition_time",
}


def _get(condition: Any, key: str) -> Any:
    """Field ``key`` (wire name) of a condition dict or model; ``None`` when unset."""
    if isinstance(condition, Mapping):
        return condition.get(key)
    try:
        return getattr(condition, _ATTRIBUTES[key])
    except AttributeError:
        raise TypeError(
            f"a condition is a Condition, a V1Condition or a dict, not {type(condition).__name__}"
        ) from None


def _type_of(condition: Any) -> Any:
    return _get(condition, "type")


def _check_type(condition_type: object, where: str) -> str:
    if not isinstance(condition_type, str) or not condition_type:
        raise ValueError(
            f"{where}: the condition type must be a non-empty string, not {condition_type!r}"
        )
    return condition_type


def _now(now: datetime.datetime | _clock.Clock | None) -> datetime.datetime:
    if now is None:
        value = datetime.datetime.now(datetime.timezone.utc)
    elif isinstance(now, datetime.datetime):
        if now.tzinfo is None:
            raise ValueError(f"set_status_condition: now must be timezone-aware, got {now!r}")
        value = now
    elif isinstance(now, _clock.Clock):
        value = now.wall()
    else:
        raise TypeError(
            f"set_status_condition: now must be a datetime, a Clock or None, not "
            f"{type(now).__name__}"
        )
    return value.replace(microsecond=0)


def _model_time(value: Any) -> Any:
    # A V1Condition's time is not validated on assignment: cut it here as the wire would.
    if not isinstance(value, datetime.datetime):
        return value
    if value.tzinfo is None:
        raise ValueError(f"lastTransitionTime must be timezone-aware, got {value!r}")
    return _whole_seconds(value)


def _wire_time(value: datetime.datetime) -> str:
    if value.tzinfo is None:
        raise ValueError(f"lastTransitionTime must be timezone-aware, got {value!r}")
    return value.astimezone(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


# --- the helpers ---------------------------------------------------------------------------------


def find_status_condition(conditions: Iterable[_C] | None, condition_type: str) -> _C | None:
    """The first condition of type ``condition_type``, or ``None`` (``meta.FindStatusCondition``).

    The condition returned is the list's own entry: changing it changes the list. ``None`` for
    ``conditions`` is an empty list (Go's nil slice).

    Example::

        >>> find_status_condition([{"type": "Ready", "status": "True"}], "Ready")
        {'type': 'Ready', 'status': 'True'}
        >>> find_status_condition(None, "Ready") is None
        True
    """
    for condition in conditions or ():
        if _type_of(condition) == condition_type:
            return condition
    return None


def is_status_condition_present_and_equal(
    conditions: Iterable[_C] | None, condition_type: str, status: str
) -> bool:
    """Whether the condition ``condition_type`` is present with status ``status``.

    ``meta.IsStatusConditionPresentAndEqual``: the first condition of that type decides.

    Example::

        >>> is_status_condition_present_and_equal(
        ...     [{"type": "Ready", "status": "Unknown"}], "Ready", "Unknown")
        True
    """
    condition = find_status_condition(conditions, condition_type)
    return condition is not None and _get(condition, "status") == status


def is_status_condition_true(conditions: Iterable[_C] | None, condition_type: str) -> bool:
    """Whether the condition ``condition_type`` is present and ``"True"``.

    ``meta.IsStatusConditionTrue``; absent is not true.

    Example::

        >>> is_status_condition_true([{"type": "Ready", "status": "True"}], "Ready")
        True
        >>> is_status_condition_true([], "Ready")
        False
    """
    return is_status_condition_present_and_equal(conditions, condition_type, "True")


def is_status_condition_false(conditions: Iterable[_C] | None, condition_type: str) -> bool:
    """Whether the condition ``condition_type`` is present and ``"False"``.

    ``meta.IsStatusConditionFalse``; absent is not false either.

    Example::

        >>> is_status_condition_false([{"type": "Ready", "status": "Unknown"}], "Ready")
        False
    """
    return is_status_condition_present_and_equal(conditions, condition_type, "False")


def remove_status_condition(conditions: MutableSequence[_C] | None, condition_type: str) -> bool:
    """Remove every condition of type ``condition_type`` from the list, in place.

    ``meta.RemoveStatusCondition``: returns whether one was there. ``None`` holds nothing to
    remove.

    Example::

        >>> conditions = [{"type": "Ready", "status": "True"}, {"type": "Degraded"}]
        >>> remove_status_condition(conditions, "Ready"), conditions
        (True, [{'type': 'Degraded'}])
    """
    if conditions is None:
        return False
    removed = False
    for index in range(len(conditions) - 1, -1, -1):
        if _type_of(conditions[index]) == condition_type:
            del conditions[index]
            removed = True
    return removed


def set_status_condition(
    conditions: MutableSequence[_C],
    new: _C,
    *,
    now: datetime.datetime | _clock.Clock | None = None,
) -> bool:
    """Set ``new`` in ``conditions`` (in place) and return whether the list changed.

    ``meta.SetStatusCondition``:

    * no condition of ``new``'s type yet: a copy of ``new`` is appended, its
      ``lastTransitionTime`` set to ``now`` when it has none;
    * otherwise that condition is updated in place: ``status``, ``reason``, ``message`` and
      ``observedGeneration`` take ``new``'s values; ``lastTransitionTime`` changes only with the
      status, to ``new``'s time when it has one, else to ``now``.

    ``conditions`` and ``new`` are both :class:`Condition` models, both ``V1Condition`` models,
    or a list of dicts and a dict (its missing keys are Go's zero values: an absent
    ``observedGeneration`` is 0 and is removed from the entry it updates). A dict's time is
    written as an RFC 3339 string (``2026-01-01T00:00:00Z``). ``now`` is a timezone-aware
    datetime, a :class:`~kubectrl.Clock` or ``None`` (the machine's time), cut to whole
    seconds.

    Raises :class:`TypeError` when ``conditions`` is not a list (``None``: create the list
    first) or ``new`` is not a condition, :class:`ValueError` when ``new`` has no type.

    Example::

        >>> import datetime
        >>> t0 = datetime.datetime(2026, 1, 1, tzinfo=datetime.timezone.utc)
        >>> conditions = [{"type": "Ready", "status": "False", "reason": "Deploying",
        ...                "message": "", "lastTransitionTime": "2025-12-31T00:00:00Z"}]
        >>> set_status_condition(conditions, {"type": "Ready", "status": "True",
        ...                                   "reason": "Deployed", "message": ""}, now=t0)
        True
        >>> conditions[0]["status"], conditions[0]["lastTransitionTime"]
        ('True', '2026-01-01T00:00:00Z')
    """
    if (
        conditions is None
        or isinstance(conditions, (str, bytes))
        or not hasattr(conditions, "append")
    ):
        raise TypeError(
            "set_status_condition: conditions must be a list (create it first, e.g. "
            f"status.setdefault('conditions', [])), not {type(conditions).__name__}"
        )
    if isinstance(new, Mapping):
        return _set_dict(conditions, new, now)
    if not hasattr(new, "last_transition_time"):
        raise TypeError(
            "set_status_condition: new must be a Condition, a V1Condition or a dict, not "
            f"{type(new).__name__}"
        )
    return _set_model(conditions, new, now)


def _set_dict(conditions: MutableSequence[Any], new: Mapping[str, Any], now: Any) -> bool:
    condition_type = _check_type(new.get("type"), "set_status_condition")
    for key in ("status", "reason", "message"):
        if new.get(key) is not None and not isinstance(new[key], str):
            raise TypeError(
                f"set_status_condition: condition {condition_type!r}: {key} must be a string, "
                f"not {new[key]!r}"
            )
    generation = new.get("observedGeneration")
    if generation is not None and (isinstance(generation, bool) or not isinstance(generation, int)):
        raise TypeError(
            f"set_status_condition: condition {condition_type!r}: observedGeneration must be an "
            f"integer, not {generation!r}"
        )
    new_time = new.get("lastTransitionTime")
    if isinstance(new_time, datetime.datetime):
        new_time = _wire_time(new_time)
    elif new_time is not None and not isinstance(new_time, str):
        raise TypeError(
            f"set_status_condition: condition {condition_type!r}: lastTransitionTime must be an "
            f"RFC 3339 string or a datetime, not {new_time!r}"
        )
    existing = find_status_condition(conditions, condition_type)
    if existing is None:
        added = dict(new)
        # Go's zero values for the fields metav1.Condition always serialises.
        for key in ("status", "reason", "message"):
            added.setdefault(key, "")
        added["lastTransitionTime"] = new_time or _wire_time(_now(now))
        if not generation:
            added.pop("observedGeneration", None)
        conditions.append(added)
        return True
    if not isinstance(existing, MutableMapping):
        raise TypeError(
            f"set_status_condition: condition {condition_type!r} in the list is a "
            f"{type(existing).__name__}; a dict is set only in a list of dicts"
        )
    changed = False
    if (existing.get("status") or "") != (new.get("status") or ""):
        existing["status"] = new.get("status") or ""
        existing["lastTransitionTime"] = new_time or _wire_time(_now(now))
        changed = True
    for key in ("reason", "message"):
        if (existing.get(key) or "") != (new.get(key) or ""):
            existing[key] = new.get(key) or ""
            changed = True
    if (existing.get("observedGeneration") or 0) != (generation or 0):
        if generation:
            existing["observedGeneration"] = generation
        else:
            existing.pop("observedGeneration", None)
        changed = True
    return changed


def _set_model(conditions: MutableSequence[Any], new: Any, now: Any) -> bool:
    condition_type = _check_type(new.type, "set_status_condition")
    existing = find_status_condition(conditions, condition_type)
    if existing is None:
        added = new.model_copy(deep=True)
        if added.last_transition_time is None:
            added.last_transition_time = _now(now)
        else:
            added.last_transition_time = _model_time(added.last_transition_time)
        conditions.append(added)
        return True
    if not (isinstance(existing, type(new)) or isinstance(new, type(existing))):
        raise TypeError(
            f"set_status_condition: condition {condition_type!r} in the list is a "
            f"{type(existing).__name__}, the new one a {type(new).__name__}; give the same kind"
        )
    changed = False
    if existing.status != new.status:
        existing.status = new.status
        existing.last_transition_time = (
            _now(now) if new.last_transition_time is None else _model_time(new.last_transition_time)
        )
        changed = True
    if (existing.reason or "") != (new.reason or ""):
        existing.reason = new.reason
        changed = True
    if (existing.message or "") != (new.message or ""):
        existing.message = new.message
        changed = True
    if (existing.observed_generation or 0) != (new.observed_generation or 0):
        existing.observed_generation = new.observed_generation
        changed = True
    return changed
