"""Parsing the server's Status into the typed error tree."""

from __future__ import annotations

import pickle

import pytest

from kubectrl import errors
from kubectrl.errors import (
    AlreadyExistsError,
    APIError,
    ConflictError,
    ExpiredError,
    FieldCause,
    ForbiddenError,
    GoneError,
    InternalError,
    InvalidError,
    NotFoundError,
    ServerTimeoutError,
    ServiceUnavailableError,
    TooManyRequestsError,
    UnauthorizedError,
    api_error_from_response,
    api_error_from_status,
)


def status(code: int, reason: str, message: str = "m", **details: object) -> dict[str, object]:
    out: dict[str, object] = {
        "kind": "Status",
        "apiVersion": "v1",
        "status": "Failure",
        "code": code,
        "reason": reason,
        "message": message,
    }
    if details:
        out["details"] = details
    return out


@pytest.mark.parametrize(
    ("code", "reason", "cls", "retryable"),
    [
        (404, "NotFound", NotFoundError, False),
        (409, "AlreadyExists", AlreadyExistsError, False),
        (409, "Conflict", ConflictError, False),
        (410, "Expired", ExpiredError, False),
        (410, "Gone", GoneError, False),
        (403, "Forbidden", ForbiddenError, False),
        (401, "Unauthorized", UnauthorizedError, False),
        (422, "Invalid", InvalidError, False),
        (429, "TooManyRequests", TooManyRequestsError, True),
        (504, "Timeout", ServerTimeoutError, True),
        (500, "ServerTimeout", ServerTimeoutError, True),
        (500, "InternalError", InternalError, True),
        (503, "ServiceUnavailable", ServiceUnavailableError, True),
        (502, "", InternalError, True),
        (418, "", APIError, False),
    ],
)
def test_class_by_reason_then_code(code: int, reason: str, cls: type, retryable: bool) -> None:
    err = api_error_from_status(status(code, reason))
    assert type(err) is cls
    assert err.code == code
    assert err.retryable is retryable
    assert errors.is_retryable(err) is retryable


def test_already_exists_is_not_a_conflict() -> None:
    err = api_error_from_status(status(409, "AlreadyExists"))
    assert not errors.is_conflict(err)
    assert errors.is_already_exists(err)


def test_expired_and_gone_both_mean_relist() -> None:
    assert errors.is_expired(api_error_from_status(status(410, "Expired")))
    assert errors.is_expired(api_error_from_status(status(410, "Gone")))
    assert isinstance(api_error_from_status(status(410, "Expired")), GoneError)


def test_message_names_verb_resource_namespace_name_and_reason() -> None:
    err = api_error_from_status(
        status(404, "NotFound", 'configmaps "x" not found'),
        verb="get",
        resource="configmaps",
        namespace="ns",
        name="x",
    )
    assert str(err) == 'get configmaps ns/x: NotFound (404): configmaps "x" not found'
    assert (err.verb, err.resource, err.namespace, err.name) == ("get", "configmaps", "ns", "x")
    assert err.server_message == 'configmaps "x" not found'


def test_invalid_lists_field_causes() -> None:
    err = api_error_from_status(
        status(
            422,
            "Invalid",
            'ConfigMap "Bad_Name" is invalid',
            causes=[
                {
                    "reason": "FieldValueInvalid",
                    "message": "Invalid value: a lowercase RFC 1123",
                    "field": "metadata.name",
                },
                {"reason": "FieldValueRequired", "message": "Required value", "field": "data.x"},
            ],
        ),
        verb="create",
        resource="configmaps",
    )
    assert isinstance(err, InvalidError)
    assert err.causes == (
        FieldCause("FieldValueInvalid", "Invalid value: a lowercase RFC 1123", "metadata.name"),
        FieldCause("FieldValueRequired", "Required value", "data.x"),
    )
    assert "metadata.name" in str(err)
    assert "data.x" in str(err)


def test_retry_after_from_header_and_details() -> None:
    err = api_error_from_response(
        429, b'{"kind":"Status","code":429,"reason":"TooManyRequests"}', retry_after="3"
    )
    assert isinstance(err, TooManyRequestsError)
    assert err.retry_after == 3.0
    err = api_error_from_status(status(429, "TooManyRequests", retryAfterSeconds=7))
    assert err.retry_after == 7.0


def test_non_status_body_is_summarised() -> None:
    err = api_error_from_response(
        502, b"<html>" + b"x" * 1000 + b"</html>", verb="list", resource="pods"
    )
    assert isinstance(err, InternalError)
    assert err.code == 502
    assert len(err.server_message) <= 200
    assert str(err).startswith("list pods: InternalError (502)")


def test_errors_pickle() -> None:
    err = api_error_from_status(
        status(404, "NotFound", "gone"), verb="get", resource="pods", name="p"
    )
    clone = pickle.loads(pickle.dumps(err))
    assert type(clone) is NotFoundError
    assert str(clone) == str(err)
    assert clone.name == "p"


def test_ignore_helpers() -> None:
    def missing() -> None:
        raise api_error_from_status(status(404, "NotFound"))

    def conflict() -> None:
        raise api_error_from_status(status(409, "Conflict"))

    assert errors.ignore_not_found(missing) is None
    assert errors.ignore_not_found(lambda: 5) == 5
    with pytest.raises(ConflictError):
        errors.ignore_not_found(conflict)


async def test_async_ignore_helpers() -> None:
    async def missing() -> int:
        raise api_error_from_status(status(404, "NotFound"))

    async def exists() -> int:
        raise api_error_from_status(status(409, "AlreadyExists"))

    assert await errors.aignore_not_found(missing()) is None
    assert await errors.aignore_already_exists(exists()) is None


def test_all_is_sorted_and_complete() -> None:
    assert errors.__all__ == sorted(errors.__all__)
    public = {
        name
        for name, obj in vars(errors).items()
        if not name.startswith("_")
        and getattr(obj, "__module__", None) == "kubectrl.errors"
        and name not in {"T"}
    }
    assert public == set(errors.__all__)
