from __future__ import annotations

from cache_fakes import FakeServer, cm, eventually

__all__ = ["FakeServer", "cm", "eventually"]
