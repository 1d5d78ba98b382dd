"""``resource.Quantity`` as the apiserver parses and writes it back (its canonical form).

A built-in object's quantities (``resources.requests``, a PVC's storage, ...) are decoded into
``k8s.io/apimachinery/pkg/api/resource`` ``Quantity`` values and encoded back canonically
(``quantity.go``: ``ParseQuantity``, ``CanonicalizeBytes``; ``amount.go``: ``AsCanonicalBytes``,
``AsCanonicalBase1024Bytes``):

* the suffix sets the format: ``Ki``..``Ei`` binary SI, ``e<n>``/``E<n>`` decimal exponent,
  anything else (``n``, ``u``, ``m``, none, ``k``..``E``) decimal SI;
* a non-zero value is rounded away from zero to a multiple of ``1n``; a binary SI value above
  ``2**63 - 1`` is capped there;
* zero is ``0``; a binary SI value that is an integer outside ``(-1024, 1024)`` is written as
  ``<n><Ki|Mi|...>`` with every factor 1024 moved into the suffix, any other value in its
  decimal format: the mantissa without trailing zeros, the exponent lowered to a multiple of 3
  and written as an SI suffix (``m``, ``k``, ...) or as ``e<n>``.

So ``1000m`` is ``1``, ``0.5`` is ``500m``, ``1Gi`` stays, ``1024Mi`` is ``1Gi``, ``1.5Gi`` is
``1536Mi``, ``0.5Ki`` is ``512``, ``1000e0`` is ``1e3`` and ``1.5e3`` is ``1500``.
"""

from __future__ import annotations

import math
import re
from fractions import Fraction

__all__ = ["canonical_quantity", "int64_amount", "parse_quantity"]

_QUANTITY = re.compile(
    r"^(?P<sign>[+-])?(?P<number>[0-9]+(?:\.[0-9]*)?|\.[0-9]+)"
    r"(?P<suffix>[KMGTPE]i|[numkMGTPE]|[eE][+-]?[0-9]+)?$"
)
_BINARY = {"Ki": 10, "Mi": 20, "Gi": 30, "Ti": 40, "Pi": 50, "Ei": 60}
_DECIMAL = {"n": -9, "u": -6, "m": -3, "": 0, "k": 3, "M": 6, "G": 9, "T": 12, "P": 15, "E": 18}
_DECIMAL_SUFFIX = {exponent: suffix for suffix, exponent in _DECIMAL.items()}
_BINARY_SUFFIX = {exponent // 10: suffix for suffix, exponent in _BINARY.items()}
_MAX_INT64 = 2**63 - 1
_NANO = Fraction(1, 10**9)


def _parse(text: str) -> tuple[Fraction, str] | None:
    found = _QUANTITY.match(text)
    if found is None:
        return None
    number = Fraction(found["number"] if found["number"] != "." else "0")
    suffix = found["suffix"] or ""
    if suffix in _BINARY:
        value, fmt = number * 2 ** _BINARY[suffix], "BinarySI"
    elif suffix[:1] in ("e", "E") and suffix not in _DECIMAL:
        exponent = int(suffix[1:])
        if abs(exponent) > 1000:
            return None  # beyond what the apiserver's decimal can hold
        value, fmt = number * Fraction(10) ** exponent, "DecimalExponent"
    else:
        value, fmt = number * Fraction(10) ** _DECIMAL[suffix], "DecimalSI"
    if value:  # rounded away from zero to the nano: ask for some, get some
        value = math.ceil(value / _NANO) * _NANO
    if fmt == "BinarySI" and value > _MAX_INT64:
        value = Fraction(_MAX_INT64)
    return (-value if found["sign"] == "-" else value), fmt


def parse_quantity(text: object) -> Fraction | None:
    """The value of a quantity string (``None`` when it is not one).

    Example::

        >>> parse_quantity("1500m")
        Fraction(3, 2)
        >>> parse_quantity("1.2.3") is None
        True
    """
    if not isinstance(text, str):
        return None
    parsed = _parse(text)
    return None if parsed is None else parsed[0]


def canonical_quantity(text: str, *, milli: bool = False) -> str | None:
    """The quantity ``text`` as the apiserver writes it back (``None`` when it is not one).

    ``milli``: a value of a core ``ResourceList`` (requests, limits, a PVC's resources, a
    quota), rounded up to ``1m`` first (``pkg/apis/core/v1/defaults.go``
    ``SetDefaults_ResourceList``).

    Example::

        >>> [canonical_quantity(q) for q in ("1000m", "0.5", "1Gi", "1024Mi", "1.5Gi", "100e-3")]
        ['1', '500m', '1Gi', '1Gi', '1536Mi', '100e-3']
        >>> canonical_quantity("1500u", milli=True)
        '2m'
    """
    parsed = _parse(text)
    if parsed is None:
        return None
    value, fmt = parsed
    if milli and (value * 1000).denominator != 1:
        magnitude = Fraction(math.ceil(abs(value) * 1000), 1000)
        value = magnitude if value > 0 else -magnitude
    elif _kept(text):
        return text
    if value == 0:
        return "0"
    if fmt == "BinarySI" and (-1024 < value < 1024 or value.denominator != 1):
        fmt = "DecimalSI"  # no rounding: small or fractional binary values are decimal
    if fmt == "BinarySI":
        amount, exponent = int(value), 0
        while amount % 1024 == 0 and exponent < 6:
            amount //= 1024
            exponent += 1
        return f"{amount}{_BINARY_SUFFIX.get(exponent, '')}"
    # mantissa * 10**exponent, without trailing zeros, the exponent a multiple of 3 (lowered)
    exponent = 0
    while value.denominator != 1:
        value *= 10
        exponent -= 1
    mantissa = int(value)
    while mantissa % 10 == 0:
        mantissa //= 10
        exponent += 1
    shift = exponent % 3
    mantissa *= 10**shift
    exponent -= shift
    if fmt == "DecimalExponent":
        return f"{mantissa}e{exponent}" if exponent else str(mantissa)
    # Beyond E there is no suffix, and the apiserver writes the mantissa alone (1000E is "1").
    return f"{mantissa}{_DECIMAL_SUFFIX.get(exponent, '')}"


def int64_amount(text: str) -> tuple[int, int] | None:
    """``(value, scale)`` when ``ParseQuantity``'s fast path holds ``text`` as an ``int64Amount``
    (``value * 10**scale``), ``None`` when it needs an arbitrary-precision decimal. What
    ``Quantity.AsInt64`` (so CEL's ``isInteger()``) reads: ``1000m`` is not an integer there.

    Example::

        >>> int64_amount("1000m"), int64_amount("1Ki"), int64_amount("1.5")
        ((1000, -3), (1024, 0), (15, -1))
    """
    found = _QUANTITY.match(text)
    if found is None:
        return None
    whole, _, fraction = found["number"].partition(".")
    num = whole.lstrip("0") or "0"
    suffix = found["suffix"] or ""
    negative = found["sign"] == "-"
    if suffix in _BINARY:
        exponent = _BINARY[suffix]
        if fraction or 15 - len(num) - int(exponent * 3 / 10) - 1 < 0:
            return None
        value = int(num) << exponent
        return None if value > _MAX_INT64 else ((-value if negative else value), 0)
    if suffix[:1] in ("e", "E") and suffix not in _DECIMAL:
        scale = int(suffix[1:])
    else:
        scale = _DECIMAL[suffix]
    if 18 - len(num) - len(fraction) < 0:
        return None
    scale -= len(fraction)
    value = int(num + fraction)
    if scale < -9 or value > _MAX_INT64:
        return None
    return (-value if negative else value), scale


def _kept(text: str) -> bool:
    """Whether ``ParseQuantity``'s fast path keeps ``text`` as the quantity's string: a value it
    deems canonical already is written back as it came (``+1``, ``1.``, ``3e0``, ``007``)."""
    found = _QUANTITY.match(text)
    if found is None:
        return False
    whole, _, fraction = found["number"].partition(".")
    num = whole.lstrip("0") or "0"
    suffix = found["suffix"] or ""
    if suffix in _BINARY:
        exponent = _BINARY[suffix]
        precision = 15 - len(num) - int(exponent * 3 / 10) - 1
        if fraction or precision < 0:
            return False
        value = int(num)
        return value << exponent <= _MAX_INT64 and value & 7 != 0
    if suffix[:1] in ("e", "E") and suffix not in _DECIMAL:
        scale = int(suffix[1:])
    else:
        scale = _DECIMAL[suffix]
    if 18 - len(num) - len(fraction) < 0:
        return False
    scale -= len(fraction)
    shifted = num + fraction
    if scale < -9 or int(shifted) > _MAX_INT64:
        return False
    return scale % 3 == 0 and not shifted.endswith("000") and shifted[0] != "0"
