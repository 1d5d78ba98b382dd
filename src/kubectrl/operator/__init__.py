"""Handlers per cause, per-object daemons and timers, on kubectrl's runtime: what a kopf user
reaches for, built on the same Manager, queue, cache, leader election, FakeAPI and FakeClock.

Work in progress (issue 38): the package is being filled in.
"""

from __future__ import annotations

__all__: list[str] = []
