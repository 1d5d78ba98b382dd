"""griffe extension: Sphinx roles in docstrings become Markdown code for the API reference.

The docstrings are written for ``help()`` and IDEs in reStructuredText's inline style
(``:class:`~kubectrl.cache.Informer```); mkdocstrings renders Markdown, where the role would show
verbatim. ``:role:`~a.b.C``` becomes ```C``` (the ``~`` keeps the last name), ``:role:`a.b.C```
becomes ```a.b.C``` and ``:role:`text <target>``` becomes ```text```.
"""

from __future__ import annotations

import re
from typing import Any

import griffe

_ROLES = "class|func|meth|attr|data|exc|mod|obj|const|ref"
_ROLE = re.compile(rf":(?:py:)?(?:{_ROLES}):`(?P<body>[^`]+)`")


def _code(match: re.Match[str]) -> str:
    body = match.group("body").strip()
    titled = re.fullmatch(r"(?P<title>.+?)\s*<(?P<target>[^>]+)>", body)
    if titled:
        return f"`{titled.group('title')}`"
    if body.startswith("~"):
        return f"`{body[1:].rsplit('.', 1)[-1]}`"
    return f"`{body}`"


class SphinxRoles(griffe.Extension):
    """Rewrites the roles of every docstring griffe loads."""

    def on_object(self, *, obj: griffe.Object, **kwargs: Any) -> None:
        if obj.docstring is not None:
            obj.docstring.value = _ROLE.sub(_code, obj.docstring.value)
