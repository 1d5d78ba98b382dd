"""Checks the clients run before sending anything: a verb's options against its typed bundle,
the names that become path segments, ``matching_fields``. Shared by the live client and the
manager's cached client, so both refuse the same input with the same words."""

from __future__ import annotations

import urllib.parse
from collections.abc import Mapping
from typing import Any

from kubectrl.errors import InvalidPathSegmentError

__all__ = [
    "COLLECTION",
    "check_matching_fields",
    "check_options",
    "check_request",
    "check_segment",
    "describe",
    "segment_problems",
]

# RFC 3986 pchar without "%" (refused) and "/" (refused): kept as they are, like ':' in
# "system:node:x"; everything else is percent-encoded (UTF-8).
_SAFE = "!$&'()*+,;=:@-._~"


def segment_problems(value: str) -> list[str]:
    """What keeps ``value`` from being one path segment (``[]`` if nothing), as the apiserver's
    ``IsValidPathSegmentName`` words it.

    Example::

        >>> segment_problems("../x%6E")
        ["may not contain '/'", "may not contain '%'"]
        >>> segment_problems("..")
        ["may not be '..'"]
    """
    if value in (".", ".."):
        return [f"may not be {value!r}"]
    return [f"may not contain {c!r}" for c in ("/", "%") if c in value]


def check_segment(
    value: object,
    *,
    argument: str,
    verb: str,
    resource: str,
    required: bool = True,
) -> str:
    """``value`` as one escaped path segment, or :class:`InvalidPathSegmentError` naming
    ``argument``, the value, ``verb`` and ``resource``. ``required=False`` lets ``""`` through
    (returned as ``""``: the caller leaves the segment out).

    Example::

        >>> check_segment("a b", argument="name", verb="get", resource="configmaps")
        'a%20b'
    """
    if not isinstance(value, str):
        raise InvalidPathSegmentError(
            argument,
            value,
            [f"must be a string, not {type(value).__name__}"],
            verb=verb,
            resource=resource,
        )
    if not value:
        if required:
            raise InvalidPathSegmentError(
                argument, value, ["may not be empty"], verb=verb, resource=resource
            )
        return ""
    problems = segment_problems(value)
    if problems:
        raise InvalidPathSegmentError(argument, value, problems, verb=verb, resource=resource)
    return urllib.parse.quote(value, safe=_SAFE)


#: ``name=`` of :func:`check_request` for a verb of a whole collection (no name in its path).
COLLECTION: object = object()


def describe(resource: object) -> str:
    """How a refusal names the resource before discovery resolved it (no request is sent):
    an :class:`~kubectrl.client.APIResource` by its label, a model class by its name, a kind by
    ``Kind (apiVersion)``, a resource by ``plural (apiVersion)``.

    Example::

        >>> describe(("apps/v1", "Deployment"))
        'Deployment (apps/v1)'
    """
    label = getattr(resource, "label", None)
    if isinstance(label, str):
        return label
    if isinstance(resource, type):
        return resource.__name__
    api_version = getattr(resource, "api_version", None)
    for attribute in ("kind", "resource"):
        value = getattr(resource, attribute, None)
        if isinstance(value, str) and isinstance(api_version, str):
            return f"{value} ({api_version})"
    if isinstance(resource, tuple) and len(resource) == 2:
        return f"{resource[1]} ({resource[0]})"
    return repr(resource)


def check_request(
    verb: str,
    resource: object,
    *,
    name: object = COLLECTION,
    namespace: object = None,
    subresource: object = "",
) -> None:
    """Refuse, before anything is sent (discovery included), a ``name`` (required unless
    ``COLLECTION``), ``namespace`` (``None`` or ``""``: none) or ``subresource`` that is not one
    path segment; :class:`InvalidPathSegmentError` names the argument, ``verb`` and
    :func:`describe` of ``resource``.

    Example::

        >>> check_request("delete", ("v1", "ConfigMap"), name="", namespace="ns")
        Traceback (most recent call last):
        ...
        kubectrl.errors.InvalidPathSegmentError: delete ConfigMap (v1): invalid name '': may not be empty (nothing was sent)
    """  # noqa: E501
    what = describe(resource)
    if namespace is not None:
        check_segment(namespace, argument="namespace", verb=verb, resource=what, required=False)
    if name is not COLLECTION:
        check_segment(name, argument="name", verb=verb, resource=what)
    check_segment(subresource, argument="subresource", verb=verb, resource=what, required=False)
    if subresource and name is COLLECTION:
        raise InvalidPathSegmentError(
            "subresource",
            subresource,
            ["is of one object, and no name was given"],
            verb=verb,
            resource=what,
        )


def check_options(verb: str, options: Mapping[str, Any], bundle: type[Any]) -> None:
    """Refuse, by name, a keyword that ``bundle`` does not declare (``TypeError``, as Python
    refuses an unexpected keyword argument).

    Example::

        >>> from typing_extensions import TypedDict
        >>> class GetOptions(TypedDict, total=False):
        ...     namespace: str
        ...     resource_version: str
        >>> check_options("get", {"namespace": "ns"}, GetOptions)
        >>> check_options("get", {"namspace": "ns"}, GetOptions)
        Traceback (most recent call last):
        ...
        TypeError: get() got an unexpected option 'namspace'; it takes namespace, resource_version
    """
    known: frozenset[str] = bundle.__optional_keys__ | bundle.__required_keys__
    unknown = [key for key in options if key not in known]
    if unknown:
        plural = "s" if len(unknown) > 1 else ""
        raise TypeError(
            f"{verb}() got an unexpected option{plural} {', '.join(map(repr, unknown))}; "
            f"it takes {', '.join(sorted(known))}"
        )


def check_matching_fields(
    matching_fields: Mapping[str, str], field_selector: str | None = None
) -> dict[str, str]:
    """``matching_fields`` as a plain dict, checked: field names and values are strings, names
    non-empty and free of ``,``, ``=`` and ``!``; a ``field_selector`` beside it is refused.

    Raises ``ValueError`` (``TypeError`` for a value that is not a string) naming the entry.

    Example::

        >>> check_matching_fields({"metadata.name": "a"})
        {'metadata.name': 'a'}
    """
    if field_selector:
        raise ValueError(
            f"pass matching_fields or field_selector, not both (matching_fields="
            f"{dict(matching_fields)!r}, field_selector={field_selector!r})"
        )
    if not isinstance(matching_fields, Mapping):
        raise TypeError(
            f"matching_fields must be a mapping of field to value, not {matching_fields!r}"
        )
    checked: dict[str, str] = {}
    for field, value in matching_fields.items():
        if not isinstance(field, str) or not field or any(c in field for c in ",=!"):
            raise ValueError(
                f"matching_fields: {field!r} is not a field name (a non-empty string without "
                "',', '=' or '!', e.g. 'metadata.name')"
            )
        if not isinstance(value, str):
            raise TypeError(
                f"matching_fields[{field!r}] must be a string, not {type(value).__name__} "
                f"({value!r})"
            )
        checked[field] = value
    return checked
