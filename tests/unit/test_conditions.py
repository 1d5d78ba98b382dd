"""kubectrl.conditions: the semantics of k8s.io/apimachinery/pkg/api/meta/conditions.go.

Each case of upstream's conditions_test.go (should-add, use-supplied-time, update-fields,
nothing changes; remove present / not-present / empty; find present / not-present) is checked on
the three spellings of a condition list (dicts, :class:`Condition`, ``V1Condition``), plus what
Python adds: ``now=`` as a datetime or a Clock, bad input refused with the culprit named, and the
:class:`Condition` model's validation (the kubebuilder markers of metav1.Condition in
k8s.io/apimachinery/pkg/apis/meta/v1/types.go) and CRD schema.
"""

from __future__ import annotations

import datetime
import importlib
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from kubernetes.client.models import V1Condition
from pydantic import Field, ValidationError

from kubectrl import crd
from kubectrl._internal.clock import FakeClock
from kubectrl.conditions import (
    Condition,
    Conditions,
    find_status_condition,
    is_status_condition_false,
    is_status_condition_present_and_equal,
    is_status_condition_true,
    remove_status_condition,
    set_status_condition,
)
from kubectrl.resources import CustomResource, ResourceModel

UTC = datetime.timezone.utc
T0 = datetime.datetime(2026, 1, 1, 12, 0, 0, tzinfo=UTC)
HOUR_BEFORE = T0 - datetime.timedelta(hours=1)
HOUR_AFTER = T0 + datetime.timedelta(hours=1)


def wire(value: datetime.datetime) -> str:
    return value.strftime("%Y-%m-%dT%H:%M:%SZ")


def model(cls: Any, **fields: Any) -> Any:
    """A condition model with Go's zero values for what ``fields`` leaves out."""
    values: dict[str, Any] = {
        "type": "",
        "status": "Unknown",
        "reason": "Unset",
        "message": "",
        "last_transition_time": HOUR_BEFORE,
    }
    values.update(fields)
    return cls(**values)


# ------------------------------------------------------------------------------ set, dicts


def test_set_appends_a_copy_of_a_new_condition_and_keeps_its_time() -> None:
    """should-add: a new type is appended with the time it was given."""
    conditions: list[dict[str, Any]] = [{"type": "first"}, {"type": "third"}]
    new = {
        "type": "second",
        "status": "True",
        "reason": "Reason",
        "message": "message",
        "lastTransitionTime": wire(HOUR_BEFORE),
    }
    assert set_status_condition(conditions, new, now=T0) is True
    assert conditions == [{"type": "first"}, {"type": "third"}, new]
    assert conditions[2] is not new


def test_set_stamps_a_new_condition_without_a_time_with_now() -> None:
    conditions: list[dict[str, Any]] = []
    new = {"type": "Ready", "status": "False", "reason": "Deploying"}
    assert set_status_condition(conditions, new, now=T0.replace(microsecond=123456)) is True
    # Go's zero values for the fields metav1.Condition always sends; seconds precision.
    assert conditions == [
        {
            "type": "Ready",
            "status": "False",
            "reason": "Deploying",
            "message": "",
            "lastTransitionTime": "2026-01-01T12:00:00Z",
        }
    ]
    assert "lastTransitionTime" not in new


def test_set_uses_the_supplied_time_when_the_status_changes() -> None:
    """use-supplied-time."""
    conditions: list[dict[str, Any]] = [
        {"type": "first"},
        {"type": "second", "status": "False"},
        {"type": "third"},
    ]
    new = {
        "type": "second",
        "status": "True",
        "reason": "Reason",
        "message": "message",
        "lastTransitionTime": wire(HOUR_BEFORE),
    }
    assert set_status_condition(conditions, new, now=T0) is True
    assert conditions[1] == new


def test_set_moves_the_time_to_now_when_the_status_changes_without_a_supplied_time() -> None:
    conditions: list[dict[str, Any]] = [
        {"type": "Ready", "status": "False", "lastTransitionTime": wire(HOUR_BEFORE)}
    ]
    assert set_status_condition(conditions, {"type": "Ready", "status": "True"}, now=T0)
    assert conditions[0]["lastTransitionTime"] == wire(T0)


def test_set_updates_the_other_fields_but_not_the_time_when_the_status_is_the_same() -> None:
    """update-fields: reason, message and observedGeneration change, the time stays."""
    conditions: list[dict[str, Any]] = [
        {"type": "first"},
        {"type": "second", "status": "True", "lastTransitionTime": wire(HOUR_BEFORE)},
        {"type": "third"},
    ]
    entry = conditions[1]
    new = {
        "type": "second",
        "status": "True",
        "lastTransitionTime": wire(HOUR_AFTER),
        "reason": "Reason",
        "message": "message",
        "observedGeneration": 3,
    }
    assert set_status_condition(conditions, new, now=T0) is True
    assert conditions[1] is entry  # updated in place
    assert entry == {**new, "lastTransitionTime": wire(HOUR_BEFORE)}


def test_set_reports_no_change_when_nothing_changes() -> None:
    """nothing changes."""
    before = {
        "type": "Ready",
        "status": "True",
        "reason": "Up",
        "message": "",
        "observedGeneration": 2,
        "lastTransitionTime": wire(HOUR_BEFORE),
    }
    conditions = [dict(before)]
    again = {**before, "lastTransitionTime": wire(HOUR_AFTER)}
    assert set_status_condition(conditions, again, now=T0) is False
    assert conditions == [before]


@pytest.mark.parametrize(
    ("key", "value"),
    [("reason", "Other"), ("message", "now with a message"), ("observedGeneration", 3)],
)
def test_set_reports_a_change_of_each_field_alone(key: str, value: Any) -> None:
    before = {
        "type": "Ready",
        "status": "True",
        "reason": "Up",
        "message": "",
        "observedGeneration": 2,
        "lastTransitionTime": wire(HOUR_BEFORE),
    }
    conditions = [dict(before)]
    assert set_status_condition(conditions, {**before, key: value}, now=T0) is True
    assert conditions == [{**before, key: value}]


def test_a_missing_observed_generation_is_zero_and_clears_the_entrys() -> None:
    conditions: list[dict[str, Any]] = [
        {"type": "Ready", "status": "True", "reason": "Up", "message": "", "observedGeneration": 4}
    ]
    new = {"type": "Ready", "status": "True", "reason": "Up", "message": ""}
    assert set_status_condition(conditions, new, now=T0) is True
    assert "observedGeneration" not in conditions[0]  # Go's omitempty int64
    assert set_status_condition(conditions, {**new, "observedGeneration": 0}, now=T0) is False


def test_a_datetime_in_a_dict_is_written_as_rfc3339() -> None:
    conditions: list[dict[str, Any]] = []
    offset = datetime.timezone(datetime.timedelta(hours=2))
    new = {"type": "Ready", "status": "True", "lastTransitionTime": T0.astimezone(offset)}
    set_status_condition(conditions, new)
    assert conditions[0]["lastTransitionTime"] == "2026-01-01T12:00:00Z"


def test_set_works_on_a_status_dict_of_an_object() -> None:
    obj: dict[str, Any] = {"metadata": {"name": "web", "generation": 5}}
    conditions = obj.setdefault("status", {}).setdefault("conditions", [])
    set_status_condition(
        conditions,
        {"type": "Ready", "status": "True", "reason": "Up", "observedGeneration": 5},
        now=T0,
    )
    assert is_status_condition_true(obj["status"]["conditions"], "Ready")
    assert obj["status"]["conditions"][0]["observedGeneration"] == 5


# ------------------------------------------------------------------------------ now


def test_now_from_a_fake_clock_is_its_wall_time() -> None:
    clock = FakeClock(wall_start=T0)
    clock.advance(90.5)
    conditions: list[dict[str, Any]] = []
    set_status_condition(conditions, {"type": "Ready", "status": "True"}, now=clock)
    assert conditions[0]["lastTransitionTime"] == "2026-01-01T12:01:30Z"


def test_now_defaults_to_the_machines_utc_time() -> None:
    before = datetime.datetime.now(UTC).replace(microsecond=0)
    conditions: list[dict[str, Any]] = []
    set_status_condition(conditions, {"type": "Ready", "status": "True"})
    stamped = datetime.datetime.fromisoformat(
        conditions[0]["lastTransitionTime"].replace("Z", "+00:00")
    )
    assert before <= stamped <= datetime.datetime.now(UTC)


def test_a_naive_now_is_refused() -> None:
    with pytest.raises(ValueError, match="now must be timezone-aware"):
        set_status_condition(
            [], {"type": "Ready", "status": "True"}, now=datetime.datetime(2026, 1, 1)
        )


def test_a_now_of_another_type_is_refused() -> None:
    with pytest.raises(TypeError, match="now must be a datetime, a Clock or None, not int"):
        set_status_condition([], {"type": "Ready"}, now=12)  # type: ignore[arg-type]


# ------------------------------------------------------------------------------ set, models


@pytest.mark.parametrize("cls", [Condition, V1Condition])
def test_models_follow_the_same_rules(cls: Any) -> None:
    conditions = [
        model(cls, type="first"),
        model(cls, type="second", status="False"),
        model(cls, type="third"),
    ]
    second = conditions[1]
    # use-supplied-time
    new = model(cls, type="second", status="True", reason="Up", last_transition_time=T0)
    assert set_status_condition(conditions, new, now=HOUR_AFTER) is True
    assert conditions[1] is second
    assert (second.status, second.reason, second.last_transition_time) == ("True", "Up", T0)
    # update-fields: the time stays
    new = model(
        cls,
        type="second",
        status="True",
        reason="Up",
        message="m",
        observed_generation=3,
        last_transition_time=HOUR_AFTER,
    )
    assert set_status_condition(conditions, new) is True
    assert (second.message, second.observed_generation, second.last_transition_time) == (
        "m",
        3,
        T0,
    )
    # nothing changes
    assert set_status_condition(conditions, new) is False
    # should-add: a copy
    fourth = model(cls, type="fourth", status="True")
    assert set_status_condition(conditions, fourth) is True
    assert conditions[3] == fourth
    assert conditions[3] is not fourth
    assert [c.type for c in conditions] == ["first", "second", "third", "fourth"]


@pytest.mark.parametrize("cls", [Condition, V1Condition])
def test_a_model_without_a_time_is_stamped_with_now(cls: Any) -> None:
    # Both model classes require the time; model_construct is Go's zero-valued Condition.
    conditions: list[Any] = [model(cls, type="Ready", status="False")]
    unset = cls.model_construct(
        type="Ready", status="True", reason="Up", message="", last_transition_time=None
    )
    assert set_status_condition(conditions, unset, now=T0.replace(microsecond=5)) is True
    assert conditions[0].last_transition_time == T0
    new: list[Any] = []
    set_status_condition(new, unset, now=HOUR_AFTER)
    assert new[0].last_transition_time == HOUR_AFTER
    assert unset.last_transition_time is None


def test_a_condition_in_a_custom_resource_status_round_trips() -> None:
    class WidgetStatus(ResourceModel):
        conditions: Conditions = Field(default_factory=list)

    class Widget(CustomResource, group="example.com", version="v1", kind="Widget"):
        status: WidgetStatus = WidgetStatus()

    widget = Widget()
    ready = Condition(
        type="example.com/Ready",
        status="True",
        reason="Up",
        message="",
        observed_generation=1,
        last_transition_time=T0,
    )
    assert set_status_condition(widget.status.conditions, ready)
    sent = widget.model_dump(by_alias=True, exclude_none=True, mode="json")
    assert sent["status"]["conditions"] == [
        {
            "type": "example.com/Ready",
            "status": "True",
            "observedGeneration": 1,
            "lastTransitionTime": "2026-01-01T12:00:00Z",
            "reason": "Up",
            "message": "",
        }
    ]
    assert Widget.model_validate(sent) == widget


def test_mixing_kinds_of_condition_is_refused_with_both_named() -> None:
    conditions: list[Any] = [model(V1Condition, type="Ready")]
    with pytest.raises(TypeError, match="is a V1Condition, the new one a Condition"):
        set_status_condition(conditions, model(Condition, type="Ready", status="True"))
    with pytest.raises(TypeError, match="'Ready' in the list is a V1Condition"):
        set_status_condition(conditions, {"type": "Ready", "status": "True"})


# ------------------------------------------------------------------------------ bad input


def test_set_on_none_is_refused_rather_than_dropped() -> None:
    with pytest.raises(TypeError, match=r"conditions must be a list .*not NoneType"):
        set_status_condition(None, {"type": "Ready"})  # type: ignore[arg-type]


def test_a_new_condition_that_is_not_one_is_refused() -> None:
    with pytest.raises(
        TypeError, match="new must be a Condition, a V1Condition or a dict, not str"
    ):
        set_status_condition([], "Ready")  # type: ignore[type-var]


@pytest.mark.parametrize("bad", [{}, {"type": ""}, {"type": 3}])
def test_a_new_condition_without_a_type_is_refused(bad: dict[str, Any]) -> None:
    conditions: list[dict[str, Any]] = []
    with pytest.raises(ValueError, match="condition type must be a non-empty string"):
        set_status_condition(conditions, bad)
    assert conditions == []


@pytest.mark.parametrize(
    ("field", "value", "message"),
    [
        ("status", True, "status must be a string, not True"),
        ("reason", 1, "reason must be a string"),
        ("observedGeneration", "3", "observedGeneration must be an integer"),
        ("observedGeneration", True, "observedGeneration must be an integer"),
        ("lastTransitionTime", 17, "lastTransitionTime must be an RFC 3339 string"),
    ],
)
def test_dict_fields_of_the_wrong_type_are_refused(field: str, value: Any, message: str) -> None:
    conditions: list[dict[str, Any]] = []
    with pytest.raises(TypeError, match=f"condition 'Ready': {message}"):
        set_status_condition(conditions, {"type": "Ready", field: value})
    assert conditions == []


def test_an_element_that_is_not_a_condition_is_named() -> None:
    with pytest.raises(TypeError, match="not int"):
        find_status_condition([3], "Ready")  # type: ignore[type-var]


# ------------------------------------------------------------------------------ find, remove, is_*


def test_find_returns_the_lists_own_first_entry_or_none() -> None:
    first = {"type": "Ready", "status": "True"}
    conditions = [{"type": "other"}, first, {"type": "Ready", "status": "False"}]
    assert find_status_condition(conditions, "Ready") is first
    assert find_status_condition(conditions, "missing") is None
    assert find_status_condition(None, "Ready") is None


@pytest.mark.parametrize(
    ("conditions", "removed", "left"),
    [
        ([{"type": "first"}, {"type": "second"}, {"type": "third"}], True, ["first", "third"]),
        ([{"type": "first"}, {"type": "third"}], False, ["first", "third"]),
        ([], False, []),
        ([{"type": "second"}, {"type": "x"}, {"type": "second"}], True, ["x"]),
    ],
)
def test_remove(conditions: list[dict[str, Any]], removed: bool, left: list[str]) -> None:
    assert remove_status_condition(conditions, "second") is removed
    assert [c["type"] for c in conditions] == left


def test_remove_from_none_removes_nothing() -> None:
    assert remove_status_condition(None, "Ready") is False


@pytest.mark.parametrize("cls", [Condition, V1Condition])
def test_remove_and_find_on_models(cls: Any) -> None:
    conditions = [model(cls, type="Ready"), model(cls, type="Degraded")]
    assert find_status_condition(conditions, "Degraded") is conditions[1]
    assert remove_status_condition(conditions, "Ready") is True
    assert [c.type for c in conditions] == ["Degraded"]


@pytest.mark.parametrize(
    ("status", "true", "false", "unknown"),
    [("True", True, False, False), ("False", False, True, False), ("Unknown", False, False, True)],
)
def test_is_status_condition(status: str, true: bool, false: bool, unknown: bool) -> None:
    for conditions in (
        [{"type": "Ready", "status": status}],
        [model(Condition, type="Ready", status=status)],
        [model(V1Condition, type="Ready", status=status)],
    ):
        assert is_status_condition_true(conditions, "Ready") is true
        assert is_status_condition_false(conditions, "Ready") is false
        assert is_status_condition_present_and_equal(conditions, "Ready", "Unknown") is unknown
        assert not is_status_condition_true(conditions, "Other")
        assert not is_status_condition_false(conditions, "Other")


def test_the_first_condition_of_a_type_decides() -> None:
    conditions = [{"type": "Ready", "status": "False"}, {"type": "Ready", "status": "True"}]
    assert not is_status_condition_true(conditions, "Ready")
    assert is_status_condition_false(conditions, "Ready")


# ------------------------------------------------------------------------------ dicts == models

_STEP = st.fixed_dictionaries(
    {
        "type": st.sampled_from(["Ready", "Degraded"]),
        "status": st.sampled_from(["True", "False", "Unknown"]),
        "reason": st.sampled_from(["A", "B"]),
        "message": st.sampled_from(["", "m"]),
        "observedGeneration": st.sampled_from([None, 1, 2]),
        "lastTransitionTime": st.sampled_from([None, HOUR_BEFORE]),
    }
)


@given(steps=st.lists(st.tuples(_STEP, st.booleans()), max_size=12))
def test_dicts_and_models_agree(steps: list[tuple[dict[str, Any], bool]]) -> None:
    """Any sequence of sets and removes gives the same results on dicts and on Condition models."""
    dicts: list[dict[str, Any]] = []
    models: list[Condition] = []
    for step, remove in steps:
        if remove:
            assert remove_status_condition(dicts, step["type"]) == remove_status_condition(
                models, step["type"]
            )
            continue
        as_dict = {k: v for k, v in step.items() if v is not None}
        fields = {
            "type": step["type"],
            "status": step["status"],
            "reason": step["reason"],
            "message": step["message"],
            "observed_generation": step["observedGeneration"],
            "last_transition_time": step["lastTransitionTime"],
        }
        as_model = Condition.model_construct(**fields)
        assert set_status_condition(dicts, as_dict, now=T0) == set_status_condition(
            models, as_model, now=T0
        )
        dumped = [m.model_dump(by_alias=True, exclude_none=True, mode="json") for m in models]
        assert dumped == dicts


# ------------------------------------------------------------------------------ Condition model


def valid(**fields: Any) -> dict[str, Any]:
    values: dict[str, Any] = {
        "type": "Ready",
        "status": "True",
        "reason": "Up",
        "message": "",
        "lastTransitionTime": "2026-01-01T00:00:00Z",
    }
    values.update(fields)
    return values


@pytest.mark.parametrize(
    "fields",
    [
        {},
        {"type": "example.com/Ready"},
        {"type": "a.b-c.d/Some_type.x-1"},
        {"type": "x" * 316},
        {"status": "Unknown"},
        {"observedGeneration": 0},
        {"reason": "A"},
        {"reason": "Reason_with,colons:and_1"},
        {"reason": "R" * 1024},
        {"message": "m" * 32768},
        {"lastTransitionTime": "2026-01-01T02:00:00+02:00"},
        {"lastTransitionTime": "2026-01-01T00:00:00.123456Z"},
    ],
)
def test_the_condition_model_accepts_what_the_api_server_accepts(fields: dict[str, Any]) -> None:
    assert Condition.model_validate(valid(**fields)).type == valid(**fields)["type"]


@pytest.mark.parametrize(
    ("fields", "where"),
    [
        ({"type": "x" * 317}, "type"),
        ({"type": "Not/Ready"}, "type"),  # the prefix is a lower-case DNS subdomain
        ({"type": "-Ready"}, "type"),
        ({"type": ""}, "type"),
        ({"status": "true"}, "status"),
        ({"status": True}, "status"),
        ({"observedGeneration": -1}, "observedGeneration"),
        ({"reason": ""}, "reason"),
        ({"reason": "1Up"}, "reason"),
        ({"reason": "Up,"}, "reason"),
        ({"reason": "Up Now"}, "reason"),
        ({"reason": "R" * 1025}, "reason"),
        ({"message": "m" * 32769}, "message"),
        ({"lastTransitionTime": "2026-01-01T00:00:00"}, "lastTransitionTime"),
        ({"lastTransitionTime": "yesterday"}, "lastTransitionTime"),
        ({"lastTransitionTime": 1767225600}, "lastTransitionTime"),
        ({"lastTransitionTime": datetime.datetime(2026, 1, 1)}, "lastTransitionTime"),
    ],
)
def test_the_condition_model_refuses_what_the_api_server_refuses(
    fields: dict[str, Any], where: str
) -> None:
    with pytest.raises(ValidationError) as info:
        Condition.model_validate(valid(**fields))
    assert [error["loc"] for error in info.value.errors()] == [(where,)]


@pytest.mark.parametrize("missing", ["type", "status", "lastTransitionTime", "reason", "message"])
def test_the_required_fields_are_upstreams(missing: str) -> None:
    fields = valid()
    del fields[missing]
    with pytest.raises(ValidationError, match=missing):
        Condition.model_validate(fields)


def test_the_generated_crd_schema_is_metav1_conditions() -> None:
    class GadgetStatus(ResourceModel):
        conditions: Conditions = Field(default_factory=list)

    class Gadget(CustomResource, group="example.com", version="v1", kind="Gadget"):
        status: GadgetStatus | None = None

    status = crd.generate(Gadget)["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"][
        "status"
    ]
    field = status["properties"]["conditions"]
    assert field["x-kubernetes-list-type"] == "map"
    assert field["x-kubernetes-list-map-keys"] == ["type"]
    item = field["items"]
    assert item["type"] == "object"
    assert sorted(item["required"]) == ["lastTransitionTime", "message", "reason", "status", "type"]
    props = {
        name: {k: v for k, v in p.items() if k != "description"}
        for name, p in item["properties"].items()
    }
    assert props == {
        "type": {
            "type": "string",
            "maxLength": 316,
            "pattern": r"^([a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*/)?"
            r"(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])$",
        },
        "status": {"type": "string", "enum": ["True", "False", "Unknown"]},
        "observedGeneration": {"type": "integer", "format": "int64", "minimum": 0},
        "lastTransitionTime": {"type": "string", "format": "date-time"},
        "reason": {
            "type": "string",
            "minLength": 1,
            "maxLength": 1024,
            "pattern": r"^[A-Za-z]([A-Za-z0-9_,:]*[A-Za-z0-9_])?$",
        },
        "message": {"type": "string", "maxLength": 32768},
    }
    assert all(p.get("description") for p in item["properties"].values())


def test_the_module_exports_what_it_defines() -> None:
    module = importlib.import_module("kubectrl.conditions")
    exported = list(module.__all__)

    def order(attr: str) -> tuple[int, str]:
        return (0 if attr.isupper() else 1 if attr[0].isupper() else 2, attr)

    assert exported == sorted(exported, key=order)
    public = {
        attr
        for attr, value in vars(module).items()
        if not attr.startswith("_")
        and getattr(value, "__module__", "").startswith("kubectrl")
        and (isinstance(value, type) or callable(value))
    }
    assert public <= set(exported)
    for attr in exported:
        value = getattr(module, attr)
        if callable(value) and getattr(value, "__module__", "") == "kubectrl.conditions":
            assert value.__doc__, attr


# --- whole seconds, as metav1.Time on the wire ---------------------------------------------------
#
# k8s.io/apimachinery/pkg/apis/meta/v1/time.go: MarshalJSON writes t.UTC() in time.RFC3339 (no
# fraction), so a Go controller's condition carries whole seconds in UTC; the dict path already
# did (``_wire_time``), the model and V1Condition paths kept the microseconds.

MICRO = T0.replace(microsecond=123456)


def test_a_condition_model_keeps_whole_seconds_in_utc() -> None:
    plus_two = datetime.timezone(datetime.timedelta(hours=2))
    for given_time in (MICRO, "2026-01-01T14:00:00.5+02:00", MICRO.astimezone(plus_two)):
        condition = Condition(
            type="Ready", status="True", reason="Up", message="", last_transition_time=given_time
        )
        assert condition.last_transition_time == T0
        assert condition.last_transition_time.microsecond == 0
        assert condition.last_transition_time.utcoffset() == datetime.timedelta(0)
        dumped = condition.model_dump(by_alias=True, mode="json")
        assert dumped["lastTransitionTime"] == "2026-01-01T12:00:00Z"


def test_set_status_condition_writes_whole_seconds_in_every_spelling() -> None:
    models: list[Condition] = []
    assert set_status_condition(
        models,
        Condition(
            type="Ready", status="False", reason="Down", message="", last_transition_time=MICRO
        ),
    )
    assert models[0].last_transition_time == T0
    v1: list[V1Condition] = []
    new = V1Condition(
        type="Ready", status="False", reason="Down", message="", last_transition_time=MICRO
    )
    assert set_status_condition(v1, new)
    assert v1[0].last_transition_time == T0
    assert v1[0].last_transition_time.microsecond == 0
    flipped = V1Condition(
        type="Ready", status="True", reason="Up", message="", last_transition_time=MICRO
    )
    assert set_status_condition(v1, flipped)
    assert v1[0].last_transition_time.microsecond == 0
    dicts: list[dict[str, Any]] = []
    assert set_status_condition(
        dicts,
        {
            "type": "Ready",
            "status": "True",
            "reason": "Up",
            "message": "",
            "lastTransitionTime": MICRO,
        },
    )
    assert dicts[0]["lastTransitionTime"] == "2026-01-01T12:00:00Z"
