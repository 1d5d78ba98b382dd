"""Label selectors: every accepted form parses to the same requirements, matches like
apimachinery's ``pkg/labels/selector.go`` (``In``/``=`` need the key; ``NotIn``/``!=`` match an
absent key) and renders the string the API server parses."""

from __future__ import annotations

import pytest

from kubectrl.labels import LabelSelector, Requirement, parse, selector_string


@pytest.mark.parametrize(
    ("selector", "labels", "expected"),
    [
        ("app=web", {"app": "web"}, True),
        ("app==web", {"app": "db"}, False),
        ("app!=web", {}, True),
        ("tier in (a, b)", {"tier": "b"}, True),
        ("tier in (a,b)", {}, False),
        ("tier notin (a)", {}, True),
        ("tier notin (a)", {"tier": "a"}, False),
        ("canary", {"canary": ""}, True),
        ("!canary", {"canary": ""}, False),
        ("app=web,!canary", {"app": "web"}, True),
        ("", {"x": "y"}, True),
    ],
)
def test_string_selectors_match_like_apimachinery(
    selector: str, labels: dict[str, str], expected: bool
) -> None:
    assert parse(selector).matches(labels) is expected


def test_three_forms_render_the_same_string() -> None:
    structured = {
        "matchLabels": {"app": "web"},
        "matchExpressions": [
            {"key": "tier", "operator": "In", "values": ["front", "back"]},
            {"key": "canary", "operator": "DoesNotExist"},
        ],
    }
    built = LabelSelector(
        {"app": "web"},
        (Requirement("tier", "In", ("back", "front")), Requirement("canary", "DoesNotExist")),
    )
    expected = "app=web,tier in (back,front),!canary"
    assert selector_string(structured) == expected
    assert selector_string(built) == expected
    assert selector_string(expected) == expected
    assert selector_string({"app": "web"}) == "app=web"
    assert LabelSelector.from_dict(structured).to_dict()["matchLabels"] == {"app": "web"}


def test_match_expressions_evaluate_locally() -> None:
    sel = parse({"matchExpressions": [{"key": "tier", "operator": "NotIn", "values": ["x"]}]})
    assert sel.matches_object({"metadata": {"labels": {"tier": "y"}}})
    assert sel.matches_object({"metadata": {}})
    assert not sel.matches_object({"metadata": {"labels": {"tier": "x"}}})


@pytest.mark.parametrize(
    ("selector", "message"),
    [
        ({"matchExpressions": [{"key": "a", "operator": "In"}]}, "needs at least one value"),
        ({"matchExpressions": [{"key": "a", "operator": "Exists", "values": ["x"]}]}, "no values"),
        ({"matchExpressions": [{"key": "a", "operator": "Gt", "values": ["1"]}]}, "'Gt'"),
        ({"app": 3}, "'app'"),
        ("a in b", "invalid label selector requirement"),
    ],
)
def test_malformed_selectors_say_what_is_wrong(selector: object, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        parse(selector)  # type: ignore[arg-type]
