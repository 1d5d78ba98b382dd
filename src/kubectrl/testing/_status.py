"""The fake's own error: a feature the in-memory API server does not implement."""

from __future__ import annotations

__all__ = ["UnsupportedFeatureError"]


class UnsupportedFeatureError(NotImplementedError):
    """The fake API server does not implement a feature the request asked for.

    The message names the feature; the fake raises it (it reaches the test as is, through the
    client) rather than silently doing something the real apiserver would not.

    Example::

        >>> err = UnsupportedFeatureError("strategic merge patch directive $retainKeys")
        >>> str(err), isinstance(err, NotImplementedError)
        ('FakeAPI does not implement strategic merge patch directive $retainKeys', True)
    """

    def __init__(self, feature: str) -> None:
        super().__init__(f"FakeAPI does not implement {feature}")
        self.feature = feature
