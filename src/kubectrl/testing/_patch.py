"""The API core's patch functions as the testing kit shows them.

What the core does not implement comes out as :class:`~kubectrl.testing.UnsupportedFeatureError`,
as it does through :class:`~kubectrl.testing.FakeAPI`.
"""

from __future__ import annotations

from typing import Any

from kubectrl.apiserver import _patch
from kubectrl.apiserver._patch import json_patch, merge_patch
from kubectrl.apiserver._status import FeatureNotImplementedError
from kubectrl.errors import UnsupportedFeatureError

__all__ = ["json_patch", "merge_patch", "strategic_merge_patch"]


def strategic_merge_patch(target: Any, patch: Any) -> Any:
    """``target`` with the strategic merge ``patch`` applied (see the core's version)."""
    try:
        return _patch.strategic_merge_patch(target, patch)
    except FeatureNotImplementedError as err:
        raise UnsupportedFeatureError(err.feature) from err
