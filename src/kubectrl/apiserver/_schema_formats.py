"""String formats as the apiserver checks them in a CRD's structural schema.

kube-openapi ``pkg/validation/strfmt`` (its default registry, restricted by apiextensions'
``pkg/apiserver/validation/formats.go`` to the formats a CRD may name; any other format is
ignored, as there). A format the fake cannot check as the server does raises
:class:`~kubectrl.apiserver._status.FeatureNotImplementedError` naming it.
"""

from __future__ import annotations

import base64
import binascii
import datetime
import ipaddress
import re
from collections.abc import Callable

from kubectrl.apiserver import _re2
from kubectrl.apiserver._status import FeatureNotImplementedError

__all__ = ["SUPPORTED", "check_format"]

_UUID = r"(?i)(^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$)|(^[0-9a-f]{32}$)"
_UUID3 = (
    r"(?i)(^[0-9a-f]{8}-[0-9a-f]{4}-3[0-9a-f]{3}-[0-9a-f]{4}-[0-9a-f]{12}$)"
    r"|(^[0-9a-f]{12}3[0-9a-f]{3}?[0-9a-f]{16}$)"
)
_UUID4 = (
    r"(?i)(^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$)"
    r"|(^[0-9a-f]{12}4[0-9a-f]{3}[89ab][0-9a-f]{15}$)"
)
_UUID5 = (
    r"(?i)(^[0-9a-f]{8}-[0-9a-f]{4}-5[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$)"
    r"|(^[0-9a-f]{12}5[0-9a-f]{3}[89ab][0-9a-f]{15}$)"
)
_HOSTNAME = (
    r"^([a-zA-Z0-9\p{S}\p{L}]((-?[a-zA-Z0-9\p{S}\p{L}]{0,62})?)|([a-zA-Z0-9\p{S}\p{L}]"
    r"(([a-zA-Z0-9-\p{S}\p{L}]{0,61}[a-zA-Z0-9\p{S}\p{L}])?)(\.)){1,}([a-zA-Z\p{L}]){2,63})$"
)
_EMAIL_LOCAL = re.compile(r"^[A-Za-z0-9!#$%&'*+/=?^_`{|}~.-]+$")
_HEXCOLOR = r"^#?([0-9a-fA-F]{3}|[0-9a-fA-F]{6})$"
_RGB = (
    r"^rgb\(\s*(0|[1-9]\d?|1\d\d?|2[0-4]\d|25[0-5])\s*,\s*(0|[1-9]\d?|1\d\d?|2[0-4]\d|25[0-5])"
    r"\s*,\s*(0|[1-9]\d?|1\d\d?|2[0-4]\d|25[0-5])\s*\)$"
)
_DATETIME = re.compile(
    r"^(\d{4})-(\d{2})-(\d{2})[Tt](\d{2}):(\d{2}):(\d{2})(\.\d{1,9})?([Zz]|[+-]\d{2}:?\d{2})$"
)
_DURATION = re.compile(
    r"^(\s*[-+]?(\d+(\.\d*)?|\.\d+)\s*(ns|us|µs|ms|s|m|h|d|w|"
    r"nanoseconds?|microseconds?|milliseconds?|seconds?|sec|minutes?|min|hours?|hr|"
    r"days?|weeks?|wk)\s*)+$"
)
_MAC = re.compile(
    r"^([0-9A-Fa-f]{2}([:-])(?:[0-9A-Fa-f]{2}\2){4}[0-9A-Fa-f]{2}"
    r"|[0-9A-Fa-f]{2}([:-])(?:[0-9A-Fa-f]{2}\3){6}[0-9A-Fa-f]{2}"
    r"|[0-9A-Fa-f]{2}([:-])(?:[0-9A-Fa-f]{2}\4){18}[0-9A-Fa-f]{2}"
    r"|(?:[0-9A-Fa-f]{4}\.){2}[0-9A-Fa-f]{4}|(?:[0-9A-Fa-f]{4}\.){3}[0-9A-Fa-f]{4}"
    r"|(?:[0-9A-Fa-f]{4}\.){9}[0-9A-Fa-f]{4})$"
)


def _date(text: str) -> bool:
    if not re.fullmatch(r"\d{4}-\d{2}-\d{2}", text):
        return False
    try:
        datetime.date.fromisoformat(text)
    except ValueError:
        return False
    return True


def _datetime(text: str) -> bool:
    match = _DATETIME.match(text)
    if match is None:
        return False
    year, month, day, hour, minute, second = (int(g) for g in match.groups()[:6])
    try:
        datetime.datetime(year, month, day, hour, minute, second)
    except ValueError:
        return False
    return True


def _ip(version: int) -> Callable[[str], bool]:
    def check(text: str) -> bool:
        try:
            address = ipaddress.ip_address(text)
        except ValueError:
            return False
        if version == 4:
            return address.version == 4
        return ":" in text

    return check


def _cidr(text: str) -> bool:
    try:
        ipaddress.ip_network(text, strict=False)
    except ValueError:
        return False
    return "/" in text


def _byte(text: str) -> bool:
    try:
        base64.b64decode(text, validate=True)
    except (binascii.Error, ValueError):
        return False
    return True


def _email(text: str) -> bool:
    # net/mail.ParseAddress: "local@domain", optionally as "Name <local@domain>".
    address = text
    named = re.fullmatch(r"[^<>]*<([^<>]+)>\s*", text)
    if named is not None:
        address = named.group(1)
    local, at, domain = address.strip().rpartition("@")
    if not at or not local or not domain:
        return False
    if not _EMAIL_LOCAL.match(local) or local.startswith(".") or local.endswith("."):
        return False
    return bool(re.fullmatch(r"[A-Za-z0-9!#$%&'*+/=?^_`{|}~.-]+", domain)) and ".." not in domain


def _hostname(text: str) -> bool:
    return len(text) <= 255 and _re2.search(_HOSTNAME, text)


def _uri(text: str) -> bool:
    # url.ParseRequestURI: an absolute URI or an absolute path, no fragment-only input.
    if not text or any(c in text for c in " \t\n"):
        return False
    if text.startswith("/"):
        return True
    return bool(re.match(r"^[A-Za-z][A-Za-z0-9+.-]*:", text))


def _regex(pattern: str) -> Callable[[str], bool]:
    return lambda text: _re2.search(pattern, text)


_CHECKS: dict[str, Callable[[str], bool]] = {
    "bsonobjectid": lambda t: bool(re.fullmatch(r"[0-9a-fA-F]{24}", t)),
    "uri": _uri,
    "email": _email,
    "hostname": _hostname,
    "ipv4": _ip(4),
    "ipv6": _ip(6),
    "cidr": _cidr,
    "mac": lambda t: bool(_MAC.match(t)),
    "uuid": _regex(_UUID),
    "uuid3": _regex(_UUID3),
    "uuid4": _regex(_UUID4),
    "uuid5": _regex(_UUID5),
    "hexcolor": _regex(_HEXCOLOR),
    "rgbcolor": _regex(_RGB),
    "byte": _byte,
    "password": lambda t: True,
    "date": _date,
    "datetime": _datetime,
    "date-time": _datetime,
    "duration": lambda t: bool(_DURATION.match(t)),
}
#: Formats apiextensions lets a CRD name (the others are ignored).
SUPPORTED = frozenset(
    [*_CHECKS, "isbn", "isbn10", "isbn13", "creditcard", "ssn", "int32", "int64", "float", "double"]
)


def check_format(fmt: str, text: str) -> bool:
    """Whether ``text`` is a valid ``fmt`` string (formats a CRD may not name always are)."""
    check = _CHECKS.get(fmt)
    if check is not None:
        return check(text)
    if fmt in ("isbn", "isbn10", "isbn13", "creditcard", "ssn"):
        raise FeatureNotImplementedError(f"the schema format {fmt!r}")
    return True
