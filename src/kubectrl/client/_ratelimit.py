"""Kept for what imports :class:`TokenBucketRateLimiter` from here: the token bucket is the
throttle step of the request pipeline, :mod:`kubectrl.client._pipeline`."""

from __future__ import annotations

from kubectrl.client._pipeline import TokenBucketRateLimiter

__all__ = ["TokenBucketRateLimiter"]
