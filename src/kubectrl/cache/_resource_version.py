"""Ordering resourceVersions: apimachinery's ``CompareResourceVersion`` (KEP-5504).

A resourceVersion is opaque to clients in general; the kube-apiserver (etcd's revision) writes
positive decimal integers without leading zeros, and since 1.35 apimachinery orders two such
values of one resource (``staging/src/k8s.io/apimachinery/pkg/util/resourceversion``): by
length, then digit by digit, with no bound on their size. Anything else (``""``, ``"0"``, a
leading zero, a letter: an aggregated server's own scheme) cannot be ordered, and is refused.
"""

from __future__ import annotations

__all__ = ["compare_resource_versions", "is_comparable_resource_version"]


def is_comparable_resource_version(resource_version: str) -> bool:
    """Whether ``resource_version`` is a positive decimal integer without a leading zero.

    Example::

        >>> is_comparable_resource_version("1042"), is_comparable_resource_version("0")
        (True, False)
    """
    return (
        bool(resource_version)
        and resource_version[0] != "0"
        and resource_version.isascii()
        and resource_version.isdigit()
    )


def compare_resource_versions(a: str, b: str) -> int:
    """-1, 0 or 1 as resourceVersion ``a`` is older than, the same as or newer than ``b``.

    Both must be resourceVersions of one resource written by a server that orders them (the
    kube-apiserver does): positive decimal integers without leading zeros, compared as numbers
    of any size. Anything else raises ``ValueError`` naming the value: such versions can only be
    compared for equality.

    Example::

        >>> compare_resource_versions("9", "10")
        -1
        >>> compare_resource_versions("abc", "10")  # doctest: +ELLIPSIS
        Traceback (most recent call last):
        ...
        ValueError: resourceVersion 'abc' cannot be ordered: ...
    """
    for value in (a, b):
        if not is_comparable_resource_version(value):
            raise ValueError(
                f"resourceVersion {value!r} cannot be ordered: not a positive decimal integer "
                "without leading zeros"
            )
    if len(a) != len(b):
        return -1 if len(a) < len(b) else 1
    return (a > b) - (a < b)
