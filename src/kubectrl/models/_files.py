"""CRD files in, generated modules checked against them."""

from __future__ import annotations

import difflib
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import yaml
import yaml.composer
import yaml.nodes

from kubectrl.models import _render
from kubectrl.models._generate import (
    MARKER,
    MAX_DEPTH,
    MAX_NODES,
    ModelGenerationError,
    _shown,
    from_crd,
    module_name,
    written_by_generator,
)

__all__ = ["assert_up_to_date", "load_crds", "write_modules"]

# A CRD file's size bound: a CRD must fit in one kube-apiserver request (3 MiB); a file of several
# CRDs (an operator's bundle) may hold many. Reading is linear in the size (aliases are refused).
MAX_FILE_BYTES = 64 * 1024 * 1024
# What YAML aliases may add to a document: ALIAS_ALLOWANCE values, plus ALIAS_FACTOR times the
# values written in it. Sharing one schema between versions adds a factor of the version count
# (the corpus's httproutes CRD: 0.8); a 1.2 kB "billion laughs" CRD: about 7,000.
ALIAS_FACTOR = 16
ALIAS_ALLOWANCE = 10_000


class _BoundedLoader(yaml.SafeLoader):
    """``yaml.SafeLoader`` that bounds each document while it is composed, before anything is
    expanded: its nesting (MAX_DEPTH), its values counted as the JSON they become, aliases
    expanded (MAX_NODES), and what aliases add (at most ALIAS_FACTOR times the values written,
    beyond ALIAS_ALLOWANCE). An alias inside the node it names (a cycle) is refused.

    CRD files use aliases to share a schema between versions (a factor of the version count);
    a "billion laughs" file uses them to turn 1.2 kB into 2^16 schema nodes (a factor of
    thousands), which took 12 s and a 3.8 MB module to generate."""

    def __init__(self, stream: str) -> None:
        super().__init__(stream)
        self._depth = 0
        self._values = 0  # the document's JSON values, aliases expanded
        self._aliased = 0  # of which reached through aliases
        self._sizes: dict[str, int] = {}  # anchor -> its values, expanded

    def compose_document(self) -> yaml.nodes.Node | None:
        self._values = self._aliased = 0
        self._sizes = {}
        return super().compose_document()

    def _refuse(self, problem: str) -> yaml.composer.ComposerError:
        mark = self.peek_event().start_mark  # type: ignore[no-untyped-call]
        return yaml.composer.ComposerError(None, None, problem, mark)

    def compose_node(self, parent: yaml.nodes.Node | None, index: int) -> yaml.nodes.Node | None:
        # A mapping's keys are composed with index None: they are not values of their own.
        is_key = isinstance(parent, yaml.MappingNode) and index is None
        if self.check_event(yaml.AliasEvent):
            anchor = self.peek_event().anchor  # type: ignore[no-untyped-call]
            if anchor in self.anchors and anchor not in self._sizes:
                raise self._refuse(f"*{anchor} is inside &{anchor} (a cycle); refused")
            size = self._sizes.get(anchor, 0)
            self._values += size
            self._aliased += size
            self._check()
            return super().compose_node(parent, index)
        anchor = self.peek_event().anchor  # type: ignore[no-untyped-call]
        before = self._values
        if not is_key:
            self._values += 1
            self._check()
        self._depth += 1
        try:
            if self._depth > MAX_DEPTH:
                raise self._refuse(f"nested deeper than {MAX_DEPTH} levels; refused")
            node = super().compose_node(parent, index)
        finally:
            self._depth -= 1
        if anchor is not None:
            self._sizes[anchor] = self._values - before
        return node

    def _check(self) -> None:
        if self._values > MAX_NODES:
            raise self._refuse(
                f"more than {MAX_NODES} values in one document (aliases expanded); refused"
            )
        written = self._values - self._aliased
        if self._aliased > ALIAS_ALLOWANCE + ALIAS_FACTOR * written:
            raise self._refuse(
                f"aliases expand the document to more than {ALIAS_FACTOR} times the "
                f"{written} values written in it (a YAML bomb?); refused"
            )


def load_crds(path: str | Path) -> list[dict[str, Any]]:
    """The CustomResourceDefinitions in a YAML file (one or several documents; empty documents
    are skipped, anything else is refused naming the file and the document).

    Example::

        >>> import pathlib, tempfile
        >>> with tempfile.TemporaryDirectory() as d:
        ...     p = pathlib.Path(d, "x.yaml")
        ...     _ = p.write_text("kind: ConfigMap\\n")
        ...     try:
        ...         load_crds(p)
        ...     except ModelGenerationError as exc:
        ...         print(str(exc).split(": ", 1)[1])
        document 1 is a ConfigMap, not a CustomResourceDefinition
    """
    path = Path(path)
    try:
        size = path.stat().st_size
        if size > MAX_FILE_BYTES:
            raise ModelGenerationError(
                f"{path}: {size} bytes; refusing a CRD file over {MAX_FILE_BYTES} bytes"
            )
        loader = _BoundedLoader(path.read_text(encoding="utf-8"))
        loader.name = str(path)
        try:
            documents = []
            while loader.check_data():  # type: ignore[no-untyped-call]
                documents.append(loader.get_data())
        finally:
            loader.dispose()
    except (OSError, UnicodeError, yaml.YAMLError) as exc:
        message = _render.escaped(str(exc), newlines=True)
        raise ModelGenerationError(f"{path}: cannot read a CRD: {message}") from exc
    crds: list[dict[str, Any]] = []
    for index, document in enumerate(documents, 1):
        if document is None:
            continue
        kind = document.get("kind") if isinstance(document, Mapping) else type(document).__name__
        if kind != "CustomResourceDefinition":
            raise ModelGenerationError(
                f"{path}: document {index} is a {_shown(kind)}, not a CustomResourceDefinition"
            )
        crds.append(document)
    if not crds:
        raise ModelGenerationError(f"{path}: no CustomResourceDefinition in the file")
    return crds


def assert_up_to_date(module: str | Path, crd: str | Path, *, version: str | None = None) -> None:
    """Fail (``AssertionError``, with a diff and the command that regenerates it) when a
    committed generated module is not what :func:`from_crd` makes of its CRD file now.

    For a test::

        def test_the_certificate_models_are_up_to_date() -> None:
            assert_up_to_date("myop/apis/certificates.py", "crds/certificates.yaml")
    """
    module, crd = Path(module), Path(crd)
    (definition,) = _one(crd)
    expected = from_crd(definition, version=version)
    actual = module.read_text(encoding="utf-8") if module.exists() else ""
    if actual == expected:
        return
    diff = "".join(
        difflib.unified_diff(
            actual.splitlines(keepends=True),
            expected.splitlines(keepends=True),
            fromfile=f"{module} (committed)",
            tofile=f"{module} (from {crd})",
        )
    )
    command = f"python -m kubectrl models --from-crd {crd} --out {module.parent}"
    if version is not None:
        command += f" --version {version}"
    if module.name != f"{module_name(definition)}.py":
        command = f"python -m kubectrl models --from-crd {crd} > {module}"
    raise AssertionError(f"{module} is out of date with {crd}; regenerate: {command}\n{diff}")


def _one(path: Path) -> list[dict[str, Any]]:
    crds = load_crds(path)
    if len(crds) != 1:
        raise ModelGenerationError(f"{path}: {len(crds)} CRDs in the file; give a file with one")
    return crds


def write_modules(
    modules: Mapping[str, str], out: str | Path, *, force: bool = False
) -> list[Path]:
    """Write each ``{module name: source}`` of :func:`from_crd` to ``out/<name>.py`` (``out``
    created if missing) and return the paths written.

    A file there that the generator did not write (no :data:`MARKER` line: a hand-written
    ``__init__.py`` is one CRD name away, plural ``""`` and group ``"_init__"``) is never
    overwritten, nor is anything written through a symlink, unless ``force=True``:
    :class:`ModelGenerationError` names the file and nothing is written.

    Example::

        >>> import tempfile
        >>> from pathlib import Path
        >>> from kubectrl.models import write_modules
        >>> out = Path(tempfile.mkdtemp())
        >>> (out / "gizmos.py").write_text("# mine")
        6
        >>> write_modules({"gizmos": "x = 1"}, out)  # doctest: +ELLIPSIS
        Traceback (most recent call last):
        ...
        kubectrl.models.ModelGenerationError: ...gizmos.py exists and was not written ...
        >>> [path.name for path in write_modules({"gizmos": "x = 1"}, out, force=True)]
        ['gizmos.py']
    """
    root = Path(out)
    paths = [root / f"{name}.py" for name in modules]
    if not force:
        for path in paths:
            if path.is_symlink() or (path.exists() and not written_by_generator(path)):
                raise ModelGenerationError(
                    f"{path} exists and was not written by `python -m kubectrl models` (no "
                    f"{MARKER!r} line); refusing to overwrite it (--force overwrites)"
                )
    root.mkdir(parents=True, exist_ok=True)
    for path, text in zip(paths, modules.values(), strict=True):
        path.write_text(text, encoding="utf-8")
    return paths
