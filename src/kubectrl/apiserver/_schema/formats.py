"""String formats as the apiserver checks them in a CRD's structural schema.

kube-openapi ``pkg/validation/strfmt`` (its default registry, restricted by apiextensions'
``pkg/apiserver/validation/formats.go`` to the formats a CRD may name; any other format is
ignored, as there). A format the fake cannot check as the server does raises
:class:`~kubectrl.apiserver._status.FeatureNotImplementedError` naming it.
"""

from __future__ import annotations

import datetime
import ipaddress
import re
from collections.abc import Callable

from kubectrl.apiserver._schema import re2
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
_HEXCOLOR = r"^#?([0-9a-fA-F]{3}|[0-9a-fA-F]{6})$"
_RGB = (
    r"^rgb\(\s*(0|[1-9]\d?|1\d\d?|2[0-4]\d|25[0-5])\s*,\s*(0|[1-9]\d?|1\d\d?|2[0-4]\d|25[0-5])"
    r"\s*,\s*(0|[1-9]\d?|1\d\d?|2[0-4]\d|25[0-5])\s*\)$"
)
_TIME = re.compile(r"^([0-9]{2}):([0-9]{2}):([0-9]{2})(.[0-9]+)?(z|([+-][0-9]{2}:[0-9]{2}))\Z")
_BASE64 = re.compile(
    r"^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=|[A-Za-z0-9+/]{4})\Z"
)
_MAC = re.compile(
    r"^([0-9A-Fa-f]{2}([:-])(?:[0-9A-Fa-f]{2}\2){4}[0-9A-Fa-f]{2}"
    r"|[0-9A-Fa-f]{2}([:-])(?:[0-9A-Fa-f]{2}\3){6}[0-9A-Fa-f]{2}"
    r"|[0-9A-Fa-f]{2}([:-])(?:[0-9A-Fa-f]{2}\4){18}[0-9A-Fa-f]{2}"
    r"|(?:[0-9A-Fa-f]{4}\.){2}[0-9A-Fa-f]{4}|(?:[0-9A-Fa-f]{4}\.){3}[0-9A-Fa-f]{4}"
    r"|(?:[0-9A-Fa-f]{4}\.){9}[0-9A-Fa-f]{4})\Z"
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
    # strfmt IsDateTime: lower-cased and split at "t", a date and then the time (a colon in
    # the offset; the fraction's separator any character)
    parts = text.lower().split("t")
    if len(text) < 4 or len(parts) < 2 or not _date(parts[0]):
        return False
    match = _TIME.search(parts[1])
    if match is None:
        return False
    return match.group(1) <= "23" and match.group(2) <= "59" and match.group(3) <= "59"


def _sloppy_ip(text: str) -> ipaddress.IPv4Address | ipaddress.IPv6Address | None:
    """``netutils.ParseIPSloppy`` (k8s.io/utils/net): Go's parser of old, leading zeros in an
    IPv4 address allowed (read as decimal), no zone."""
    if re.fullmatch(r"[0-9]+(\.[0-9]+){3}", text):
        parts = [int(p) for p in text.split(".")]
        return ipaddress.IPv4Address(".".join(map(str, parts))) if max(parts) <= 255 else None
    if ":" not in text or "%" in text:
        return None
    try:
        return ipaddress.IPv6Address(text)
    except ValueError:
        return None


def _ip(version: int) -> Callable[[str], bool]:
    # strfmt IsIPv4/IsIPv6: any address ParseIPSloppy reads, with a "." (ipv4) or ":" (ipv6)
    def check(text: str) -> bool:
        return _sloppy_ip(text) is not None and ("." if version == 4 else ":") in text

    return check


def _cidr(text: str) -> bool:
    # netutils.ParseCIDRSloppy
    address, slash, prefix = text.partition("/")
    ip = _sloppy_ip(address)
    if not slash or ip is None or not re.fullmatch(r"[0-9]{1,3}", prefix):
        return False
    return int(prefix) <= (32 if ip.version == 4 else 128)


def _byte(text: str) -> bool:
    # strfmt's base64 pattern: padded groups of four, at least one
    return bool(_BASE64.match(text))


_ATEXT = r"[A-Za-z0-9!#$%&'*+/=?^_`{|}~-]+"
_DOT_ATOM = rf"{_ATEXT}(?:\.{_ATEXT})*"
_QUOTED = r'"(?:[^"\\\r\n]|\\.)*"'
_ADDRESS = re.compile(rf"^(?:{_DOT_ATOM}|{_QUOTED})@(?:{_DOT_ATOM}|\[[^\[\]\\]*\])\Z")


def _email(text: str) -> bool:
    # net/mail.ParseAddress: "local@domain" or "Name <local@domain>"; the local part a dot-atom
    # or a quoted string, the domain a dot-atom or a [literal]
    address = text.strip(" \t")  # spaces around it, as the parser skips; not a newline
    named = re.fullmatch(r"[^<>]*<([^<>]+)>", address)
    if named is not None:
        address = named.group(1)
    return bool(_ADDRESS.match(address))


def _hostname(text: str) -> bool:
    return len(text) <= 255 and re2.search(_HOSTNAME, text)


def _uri(text: str) -> bool:
    # url.ParseRequestURI: an absolute URI or an absolute path, no fragment-only input.
    if not text or any(c in text for c in " \t\n"):
        return False
    scheme = re.match(r"^[A-Za-z][A-Za-z0-9+.-]*:", text)
    rest = text[scheme.end() :] if scheme else text
    if rest.startswith("/") and re.search(r"%(?![0-9A-Fa-f]{2})", rest.split("?", 1)[0]):
        return False  # a path is unescaped (an opaque "scheme:rest" is not): a bad %-escape
    if text.startswith("/"):
        return True
    return bool(re.match(r"^[A-Za-z][A-Za-z0-9+.-]*:", text))


_GO_DURATION = re.compile(
    r"^[-+]?(?:0|(?:(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:ns|us|µs|μs|ms|s|m|h))+)\Z"
)
_UNIT_MATCH = re.compile(r"([0-9]+)\s*([A-Za-zµ]+)")
_UNITS = (
    ("ns", "nano"),
    ("us", "µs", "micro"),
    ("ms", "milli"),
    ("s", "sec"),
    ("m", "min"),
    ("h", "hr", "hour"),
    ("d", "day"),
    ("w", "wk", "week"),
)


def _duration(text: str) -> bool:
    # strfmt ParseDuration: Go's time.ParseDuration, else any "<digits> <unit>" found anywhere
    # (a unit's last variant as a prefix: "hours", "seconds"), case-insensitive
    if _GO_DURATION.match(text):
        return True
    for _, word in _UNIT_MATCH.findall(text):
        unit = word.lower()
        for variants in _UNITS:
            if unit in variants or unit.startswith(variants[-1]):
                return True
    return False


def _regex(pattern: str) -> Callable[[str], bool]:
    return lambda text: re2.search(pattern, text)


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
    "duration": _duration,
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
