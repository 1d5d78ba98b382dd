"""MkDocs hook: links from a docs page to repository files outside docs/ go to GitHub.

A page may link ``../examples/sample_controller/README.md`` so that the link works when the
Markdown is read on GitHub or in a clone; on the site, such a target is not a page, so the hook
points it at the file on GitHub (``blob/main/...``, ``tree/main/...`` for a directory). A target
that does not exist in the repository is left alone, so that the strict build reports it.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

REPOSITORY = "https://github.com/kubectrl/kubectrl"
_LINK = re.compile(r"(?P<head>\]\()(?P<target>\.\./[^)\s#]+)(?P<anchor>#[^)\s]*)?(?P<tail>\))")


def on_page_markdown(markdown: str, page: Any, config: Any, files: Any) -> str:
    docs = Path(config["docs_dir"]).resolve()
    root = docs.parent
    here = (docs / page.file.src_path).parent

    def rewrite(match: re.Match[str]) -> str:
        target = (here / match.group("target")).resolve()
        if docs in target.parents or not target.exists() or root not in target.parents:
            return match.group(0)
        kind = "tree" if target.is_dir() else "blob"
        url = f"{REPOSITORY}/{kind}/main/{target.relative_to(root).as_posix()}"
        return f"{match.group('head')}{url}{match.group('anchor') or ''}{match.group('tail')}"

    return _LINK.sub(rewrite, markdown)
