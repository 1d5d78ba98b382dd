"""The "not given" sentinel: an option whose default another layer decides."""

from __future__ import annotations

__all__ = ["DEFAULT", "Default"]


class Default:
    """The type of "not given" (the factory's own value applies)."""

    def __repr__(self) -> str:
        return "<factory default>"


DEFAULT = Default()
