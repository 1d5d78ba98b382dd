"""Shards of a collection: hash ranges over ``metadata.uid`` or ``metadata.namespace``.

kube-apiserver 1.36 serves sharded lists and watches behind the alpha feature gate
``ShardedListAndWatch`` (KEP-5866): the ``shardSelector`` parameter

    shardRange(object.metadata.uid, '0x0000000000000000', '0x8000000000000000')

keeps the objects whose 64-bit FNV-1a hash of that field falls in ``[start, end)``; several
``shardRange`` calls joined by ``||`` keep the union, and a list answers with
``metadata.shardInfo.selector`` echoing what it applied. A server without the gate ignores the
parameter (no error, every object, no ``shardInfo``), so a client that asked for a shard must
check the echo and otherwise filter by itself with the same hash; :class:`ShardSelector` does
both (:meth:`ShardSelector.matches` is the server's match, bit for bit).

The semantics follow the apiserver's ``k8s.io/apimachinery/pkg/sharding`` package (``hash.go``:
FNV-1a 64 over the field's bytes; ``selector.go``: ``start <= hash < end``, the union of the
ranges, one field for all of them; ``apiserver/pkg/sharding/parser.go`` (CEL parser): bounds are
``0x`` and exactly 16 lowercase hex digits, except the top bound ``0x10000000000000000``).
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Iterable, Mapping
from typing import Any, Literal

__all__ = [
    "HASH_SPACE",
    "ShardField",
    "ShardRange",
    "ShardSelector",
    "fnv1a_64",
    "shard_index",
    "split_ranges",
]

#: The size of the hash space: bounds are in ``[0, 2**64]``.
HASH_SPACE = 1 << 64
_FNV_OFFSET = 0xCBF29CE484222325
_FNV_PRIME = 0x100000001B3
_MASK = HASH_SPACE - 1

#: The fields a shard can hash (the only two the apiserver accepts).
ShardField = Literal["uid", "namespace"]
_FIELD_PATHS: dict[str, str] = {
    "uid": "object.metadata.uid",
    "namespace": "object.metadata.namespace",
}
_PATH_FIELDS = {path: field for field, path in _FIELD_PATHS.items()}
_RANGE = re.compile(
    r"\s*shardRange\(\s*(object\.metadata\.[a-z]+)\s*,\s*'(0x[0-9a-f]+)'\s*,\s*'(0x[0-9a-f]+)'\s*\)\s*"
)


def fnv1a_64(value: str) -> int:
    """The 64-bit FNV-1a hash of ``value``'s UTF-8 bytes, as the apiserver's shard hash.

    Example::

        >>> hex(fnv1a_64(""))
        '0xcbf29ce484222325'
        >>> hex(fnv1a_64("default"))
        '0xebada5168620c5fe'
    """
    h = _FNV_OFFSET
    for byte in value.encode():
        h = ((h ^ byte) * _FNV_PRIME) & _MASK
    return h


def _hex(bound: int) -> str:
    return f"0x{bound:016x}"


@dataclasses.dataclass(frozen=True, order=True)
class ShardRange:
    """The hashes ``start <= h < end`` (``0 <= start < end <= 2**64``).

    Example::

        >>> ShardRange(0, 1 << 63)
        ShardRange(start=0x0000000000000000, end=0x8000000000000000)
    """

    start: int
    end: int

    def __post_init__(self) -> None:
        if not (isinstance(self.start, int) and isinstance(self.end, int)):
            raise TypeError(
                f"shard range bounds must be integers, not {self.start!r}, {self.end!r}"
            )
        if not 0 <= self.start < self.end <= HASH_SPACE:
            raise ValueError(
                f"shard range [{self.start:#x}, {self.end:#x}) must satisfy "
                f"0 <= start < end <= 2**64"
            )

    def __contains__(self, hash_value: object) -> bool:
        return isinstance(hash_value, int) and self.start <= hash_value < self.end

    def __repr__(self) -> str:
        return f"ShardRange(start={_hex(self.start)}, end={_hex(self.end)})"


def split_ranges(count: int) -> list[ShardRange]:
    """``count`` ranges tiling the hash space: range ``i`` is
    ``[floor(i * 2**64 / count), floor((i + 1) * 2**64 / count))``.

    Example::

        >>> [(hex(r.start), hex(r.end)) for r in split_ranges(2)]
        [('0x0', '0x8000000000000000'), ('0x8000000000000000', '0x10000000000000000')]
    """
    if not isinstance(count, int) or isinstance(count, bool) or count < 1:
        raise ValueError(f"shard count must be a positive integer, not {count!r}")
    return [
        ShardRange(i * HASH_SPACE // count, (i + 1) * HASH_SPACE // count) for i in range(count)
    ]


def shard_index(obj: Mapping[str, Any], count: int, field: ShardField = "uid") -> int:
    """Which of :func:`split_ranges` ``(count)`` holds ``obj`` (hashing ``field``).

    Example::

        >>> shard_index({"metadata": {"namespace": "default"}}, 2, "namespace")
        1
    """
    if count < 1:
        raise ValueError(f"shard count must be a positive integer, not {count!r}")
    h = fnv1a_64(_field_value(obj, field))
    # The largest i with floor(i * 2**64 / count) <= h.
    i = (h * count) // HASH_SPACE
    while i + 1 < count and (i + 1) * HASH_SPACE // count <= h:
        i += 1
    while i > 0 and i * HASH_SPACE // count > h:
        i -= 1
    return i


def _field_value(obj: Mapping[str, Any], field: str) -> str:
    meta = obj.get("metadata") if isinstance(obj, Mapping) else None
    value = meta.get(field) if isinstance(meta, Mapping) else None
    return value if isinstance(value, str) else ""


@dataclasses.dataclass(frozen=True)
class ShardSelector:
    """A shard: the union of hash ranges over one field (``"uid"`` or ``"namespace"``).

    ``str(selector)`` is the apiserver's ``shardSelector`` parameter; :meth:`matches` decides as
    the apiserver does (an object without the field hashes the empty string, as the apiserver's
    accessor reads it: every cluster-scoped object lands in one namespace shard).

    Sharding by ``uid`` spreads objects evenly; sharding by ``namespace`` keeps a namespace's
    objects together (an owner and what it owns land in one shard) but is only as even as the
    namespaces are.

    Example::

        >>> s = ShardSelector.of(0, 2)
        >>> str(s)
        "shardRange(object.metadata.uid, '0x0000000000000000', '0x8000000000000000')"
        >>> ShardSelector.parse(str(s)) == s
        True
    """

    ranges: tuple[ShardRange, ...]
    field: ShardField = "uid"

    def __post_init__(self) -> None:
        if self.field not in _FIELD_PATHS:
            raise ValueError(
                f"shard field must be 'uid' or 'namespace' (the fields the apiserver hashes), "
                f"not {self.field!r}"
            )
        ranges = tuple(self.ranges)
        if not ranges:
            raise ValueError("a shard selector needs at least one range")
        for r in ranges:
            if not isinstance(r, ShardRange):
                raise TypeError(f"shard selector ranges must be ShardRange objects, not {r!r}")
        object.__setattr__(self, "ranges", ranges)

    @classmethod
    def of(cls, index: int, count: int, field: ShardField = "uid") -> ShardSelector:
        """Shard ``index`` of ``count`` equal ranges (:func:`split_ranges`)."""
        ranges = split_ranges(count)
        if not 0 <= index < count:
            raise ValueError(f"shard index {index!r} is out of range for {count} shards")
        return cls((ranges[index],), field)

    @classmethod
    def union(cls, shards: Iterable[ShardSelector]) -> ShardSelector:
        """One selector for several shards over the same field (ranges merged)."""
        shards = list(shards)
        if not shards:
            raise ValueError("the union of no shards selects nothing; pass at least one")
        fields = {s.field for s in shards}
        if len(fields) != 1:
            raise ValueError(f"shards to merge must hash the same field, not {sorted(fields)}")
        merged: list[ShardRange] = []
        for r in sorted(r for s in shards for r in s.ranges):
            if merged and r.start <= merged[-1].end:
                merged[-1] = ShardRange(merged[-1].start, max(merged[-1].end, r.end))
            else:
                merged.append(r)
        return cls(tuple(merged), shards[0].field)

    @classmethod
    def parse(cls, text: str) -> ShardSelector:
        """Read the apiserver's selector syntax (as ``metadata.shardInfo.selector`` echoes it).

        Raises ``ValueError`` naming the text for anything else.
        """
        ranges: list[ShardRange] = []
        fields: set[str] = set()
        for part in text.split("||"):
            m = _RANGE.fullmatch(part)
            if m is None or m.group(1) not in _PATH_FIELDS:
                raise ValueError(f"not a shard selector: {text!r} (at {part.strip()!r})")
            fields.add(_PATH_FIELDS[m.group(1)])
            ranges.append(ShardRange(int(m.group(2), 16), int(m.group(3), 16)))
        if len(fields) != 1:
            raise ValueError(f"shard selector {text!r} mixes fields {sorted(fields)}")
        (field,) = fields
        return cls(tuple(ranges), field)  # type: ignore[arg-type]

    def matches(self, obj: Mapping[str, Any]) -> bool:
        """Whether ``obj`` is in this shard (the apiserver's decision for it)."""
        h = fnv1a_64(_field_value(obj, self.field))
        return any(r.start <= h < r.end for r in self.ranges)

    @property
    def fraction(self) -> float:
        """The share of the hash space this shard covers (0 to 1)."""
        return sum(r.end - r.start for r in self.ranges) / HASH_SPACE

    def __str__(self) -> str:
        path = _FIELD_PATHS[self.field]
        return " || ".join(
            f"shardRange({path}, '{_hex(r.start)}', '{_hex(r.end)}')" for r in self.ranges
        )
