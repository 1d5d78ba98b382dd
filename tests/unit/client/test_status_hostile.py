"""A broken or hostile server's error bodies: a ``Status`` with fields of the wrong JSON type,
or no Status at all, still gives the typed error its HTTP code (or its ``reason``) asks for.

A field that is text in the API (``reason``, ``message``, a cause's ``field``) but arrives as a
number or a boolean is stringified; anything else of the wrong type (an object, a list, null) is
ignored, as are ``details``, ``causes`` or ``retryAfterSeconds`` of the wrong type. Never a
``TypeError``, a ``ValueError`` or a ``RecursionError``.
"""

from __future__ import annotations

import json
import pickle
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kubectrl import errors
from kubectrl.errors import (
    APIError,
    BadRequestError,
    ConflictError,
    ExpiredError,
    ForbiddenError,
    InternalError,
    InvalidError,
    KubectrlError,
    NotFoundError,
    ServiceUnavailableError,
    TooManyRequestsError,
    api_error_from_response,
    api_error_from_status,
)

_BY_CODE: dict[int, type[APIError]] = {
    400: BadRequestError,
    403: ForbiddenError,
    404: NotFoundError,
    409: ConflictError,
    422: InvalidError,
    429: TooManyRequestsError,
    500: InternalError,
    503: ServiceUnavailableError,
}


def body(**fields: Any) -> bytes:
    return json.dumps(
        {"kind": "Status", "apiVersion": "v1", "status": "Failure", **fields}
    ).encode()


# (fields of the Status, HTTP code, the class, what the message must say)
HOSTILE: dict[str, tuple[dict[str, Any], int, type[APIError], str]] = {
    "code a string": (
        {"code": "x", "message": "gone"},
        404,
        NotFoundError,
        "NotFoundError (404): gone",
    ),
    "details a list": ({"details": [], "reason": "NotFound"}, 404, NotFoundError, "NotFound (404)"),
    "details a string": ({"details": "abc"}, 409, ConflictError, "ConflictError (409)"),
    "message an object": (
        {"message": {}, "reason": "Forbidden"},
        403,
        ForbiddenError,
        "Forbidden (403)",
    ),
    "message a list": ({"message": [1, [2]]}, 500, InternalError, "InternalError (500)"),
    "message a number": ({"message": 42}, 400, BadRequestError, "BadRequestError (400): 42"),
    "reason a number": ({"reason": 5, "message": "m"}, 404, NotFoundError, "5 (404): m"),
    "reason a boolean": ({"reason": True}, 404, NotFoundError, "true (404)"),
    "reason an object": ({"reason": {"NotFound": 1}}, 503, ServiceUnavailableError, "(503)"),
    "reason a list of a known reason": ({"reason": ["Conflict"]}, 404, NotFoundError, "(404)"),
    "retryAfterSeconds a string": (
        {"details": {"retryAfterSeconds": "abc"}},
        429,
        TooManyRequestsError,
        "TooManyRequestsError (429)",
    ),
    "retryAfterSeconds a boolean": (
        {"details": {"retryAfterSeconds": True}},
        429,
        TooManyRequestsError,
        "(429)",
    ),
    "causes a number": ({"details": {"causes": 5}}, 422, InvalidError, "InvalidError (422)"),
    "causes an object": ({"details": {"causes": {"field": "x"}}}, 422, InvalidError, "(422)"),
    "causes a string": ({"details": {"causes": "abc"}}, 422, InvalidError, "(422)"),
    "a cause not an object": (
        {"details": {"causes": [5, None, "x", [1], {"field": "spec.x", "message": "bad"}]}},
        422,
        InvalidError,
        "spec.x: bad",
    ),
    "a cause's fields of odd types": (
        {"details": {"causes": [{"field": {}, "message": [1], "reason": 7}]}},
        422,
        InvalidError,
        "(422)",
    ),
    "name not a string": ({"details": {"name": 5}}, 404, NotFoundError, "NotFoundError (404)"),
    "a code that disagrees": ({"code": 200, "message": "m"}, 500, InternalError, "(500): m"),
}


@pytest.mark.parametrize("case", sorted(HOSTILE))
def test_a_malformed_status_gives_the_typed_error(case: str) -> None:
    """Before, ``causes`` that were a number raised ``TypeError`` from the list comprehension."""
    fields, code, expected, text = HOSTILE[case]
    err = api_error_from_response(code, body(**fields), verb="get", resource="configmaps")
    assert type(err) is expected
    assert err.code == code
    assert text in str(err), str(err)
    assert str(err).startswith("get configmaps: ")
    assert pickle.loads(pickle.dumps(err)).code == code


def test_a_cause_that_is_not_an_object_is_skipped() -> None:
    err = api_error_from_response(
        422, body(details={"causes": [5, {"field": "a", "message": "b"}]})
    )
    assert [(c.field, c.message) for c in err.causes] == [("a", "b")]


@pytest.mark.parametrize(
    ("seconds", "expected"), [("abc", None), (True, None), (-5, 0.0), (2.5, None), (7, 7.0)]
)
def test_retry_after_seconds_of_odd_types(seconds: object, expected: float | None) -> None:
    """Only an integer is ``retryAfterSeconds`` (Go's int32); a negative one means now. Before,
    ``true`` became 1 s and -5 a negative wait."""
    err = api_error_from_response(429, body(details={"retryAfterSeconds": seconds}))
    assert isinstance(err, TooManyRequestsError)
    assert err.retry_after == expected


@pytest.mark.parametrize("header", ["nan", "1e999", "-inf", "abc", "\x00", "Mon, 99 Foo 9 9:9:9"])
def test_a_retry_after_header_that_is_no_number_of_seconds(header: str) -> None:
    """Before, ``nan`` became 0 s and ``1e999`` an infinite wait."""
    err = api_error_from_response(429, b"", retry_after=header)
    assert isinstance(err, TooManyRequestsError)
    assert err.retry_after is None


@pytest.mark.parametrize(
    "raw",
    [
        b"[" * 100_000,  # a RecursionError in the decoder, before
        b'{"kind": "Status", "message": ' + b"[" * 100_000,
        b"\xff\xfe<html>",
        b'{"kind": "Status", "code": 404',  # truncated
        b"null",
        b"[]",
        b'"Status"',
        b'{"kind": ["Status"]}',
    ],
)
def test_a_body_that_is_no_status(raw: bytes) -> None:
    """The code decides, and the message quotes at most 200 bytes of the body."""
    err = api_error_from_response(503, raw, verb="list", resource="pods")
    assert type(err) is ServiceUnavailableError
    assert len(str(err)) < 300
    assert str(err).startswith("list pods: ServiceUnavailableError (503)")


def test_an_error_event_status_with_odd_fields() -> None:
    """The watch decoder's path: ``code`` from the Status itself."""
    err = api_error_from_status(
        {"kind": "Status", "code": 410, "reason": "Expired", "details": {"causes": 5}},
        verb="watch",
        resource="configmaps",
    )
    assert type(err) is ExpiredError
    err = api_error_from_status({"code": True, "reason": 7, "message": {"a": 1}})
    assert type(err) is APIError
    assert err.code == 0
    assert str(err) == "resource: 7 (0)"


_JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=20),
    lambda children: (
        st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=8), children, max_size=4)
    ),
    max_leaves=20,
)
_FIELDS = st.sampled_from(["code", "reason", "message", "details", "status", "kind", "metadata"])
_CAUSE = st.dictionaries(st.sampled_from(["field", "message", "reason"]), _JSON)
_DETAILS = st.fixed_dictionaries(
    {},
    optional={
        "causes": _JSON | st.lists(_CAUSE | _JSON, max_size=3),
        "retryAfterSeconds": _JSON,
        "name": _JSON,
    },
)
_STATUS = st.fixed_dictionaries(
    {"kind": st.just("Status")},
    optional={
        "code": _JSON,
        "reason": _JSON | st.sampled_from(["NotFound", "Expired", "Conflict", "Invalid"]),
        "message": _JSON,
        "details": _DETAILS | _JSON,
    },
)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    code=st.integers(min_value=-10, max_value=1200),
    document=_STATUS | st.dictionaries(_FIELDS, _JSON) | _JSON,
    retry_after=st.none() | st.text(max_size=40) | st.sampled_from(["nan", "inf", "-1e999"]),
)
def test_any_json_body_and_any_code_give_a_kubectrl_error(
    code: int, document: Any, retry_after: str | None
) -> None:
    """Whatever JSON the body holds, whatever the code, the result is an APIError whose message
    can be formatted and whose code is the response's (when it is an HTTP status)."""
    raw = json.dumps(document).encode()
    err = api_error_from_response(code, raw, retry_after=retry_after, verb="get", resource="x")
    assert isinstance(err, APIError)
    assert isinstance(err, KubectrlError)
    assert str(err).startswith("get x")  # then details.name, when the Status gives one
    if 100 <= code <= 999:
        assert err.code == code
    if 400 <= code <= 599 and not isinstance(document, dict):
        assert type(err) is errors._BY_CODE.get(code, InternalError if code >= 500 else APIError)
    assert err.retry_after is None or err.retry_after >= 0.0
    if isinstance(document, dict):
        watch_err = api_error_from_status(document, verb="watch", resource="x")
        assert isinstance(watch_err, APIError)
        str(watch_err)
