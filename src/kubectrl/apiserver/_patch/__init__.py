"""Patches and server-side apply: JSON, merge and strategic merge patches (:mod:`.patches`) and
server-side apply with ``managedFields`` (:mod:`.apply`).

The patch functions are exported here too: the testing kit (``kubectrl.testing``) patches with
them.
"""

from __future__ import annotations

from kubectrl.apiserver._patch.patches import json_patch, merge_patch, strategic_merge_patch

__all__ = ["json_patch", "merge_patch", "strategic_merge_patch"]
