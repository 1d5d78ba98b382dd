"""The project scaffolder behind ``python -m kubectrl init`` and ``python -m kubectrl create api``.

kubebuilder's verbs for a Python project. ``init`` writes the skeleton (pyproject, Dockerfile,
noxfile, the manager's ``__main__`` with its flags, the manifests generator, empty registries of
models, controllers and webhooks); ``create api`` adds one kind: its model, its reconciler with
RBAC declarations, unit tests on :class:`~kubectrl.testing.FakeAPI`, an envtest test and, with
``webhooks=True``, a defaulter and a validator with their tests. It registers them at the
``# +kubectrl:scaffold:...`` marker lines (as kubebuilder's ``+kubebuilder:scaffold`` markers)
and regenerates the manifests, so the project's tests pass at once.

Templates are package data (``templates/*.tmpl``, :class:`string.Template` syntax). Nothing is
ever overwritten: a file that exists already stops the scaffold before anything is written.
"""

from __future__ import annotations

import keyword
import re
import string
import subprocess
import sys
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any

from kubectrl._scaffold._layout import layout, layout_text
from kubectrl.errors import KubectrlError

__all__ = ["ScaffoldError", "create_api", "init", "kubectrl_source_url", "plural_of"]

_TEMPLATES = resources.files(__name__) / "templates"
_PROJECT_FILE = "PROJECT"

_NAME = re.compile(r"^[a-z]([-a-z0-9]*[a-z0-9])?$")
_DOMAIN = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$")
_VERSION = re.compile(r"^v[1-9][0-9]*((alpha|beta)[1-9][0-9]*)?$")
_KIND = re.compile(r"^[A-Z][A-Za-z0-9]*$")
_RESERVED_PACKAGES = {"kubectrl", "tests", "test", "config", "dist", "api"}


class ScaffoldError(KubectrlError):
    """What stops a scaffold, in one line (a file it would overwrite, a bad name...)."""


def _render(template: str, values: dict[str, str]) -> str:
    text = (_TEMPLATES / template).read_text(encoding="utf-8")
    try:
        rendered = string.Template(text).substitute(values)
    except (KeyError, ValueError) as exc:  # a bug in a template, not the user's fault
        raise RuntimeError(f"scaffold template {template}: {exc!r}") from exc
    # Long names make long lines: laid out as ruff format would, so the project is formatted.
    return layout_text(rendered) if template.endswith(".py.tmpl") else rendered


def _write_all(root: Path, files: dict[Path, str]) -> list[Path]:
    existing = sorted(str(path) for path in files if (root / path).exists())
    if existing:
        raise ScaffoldError(f"would overwrite {', '.join(existing)} in {root}; nothing written")
    for path, text in files.items():
        target = root / path
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text, encoding="utf-8")
    return list(files)


def plural_of(kind: str) -> str:
    """The plural resource name of ``kind``, lowercase, as kubebuilder derives it (simply).

    Example::

        >>> plural_of("Frigate"), plural_of("Policy"), plural_of("Ingress"), plural_of("Day")
        ('frigates', 'policies', 'ingresses', 'days')
    """
    lower = kind.lower()
    if lower.endswith(("s", "x", "z", "ch", "sh")):
        return lower + "es"
    if lower.endswith("y") and lower[-2:-1] not in set("aeiou"):
        return lower[:-1] + "ies"
    return lower + "s"


_SOURCE_SCHEMES = ("file://", "https://", "http://", "git+https://", "git+ssh://", "git+file://")


def kubectrl_source_url(source: str, cwd: Path | None = None) -> str:
    """The URL a project's ``kubectrl @ URL`` dependency names, from ``--kubectrl-source``.

    A path (relative to ``cwd``) must be a kubectrl checkout (its ``pyproject.toml`` names the
    ``kubectrl`` project) and becomes a ``file://`` URL; a URL (``file://``, ``https://``,
    ``git+https://...@ref``, ``git+ssh://``) is kept as it is.

    Example::

        >>> kubectrl_source_url("git+https://github.com/example/kubectrl@main")
        'git+https://github.com/example/kubectrl@main'
        >>> try:
        ...     kubectrl_source_url("ftp://example.com/kubectrl")
        ... except ScaffoldError as err:
        ...     print(err)  # doctest: +ELLIPSIS
        --kubectrl-source 'ftp://example.com/kubectrl': expected a path to a kubectrl checkout ...
    """
    if "://" in source:
        if not source.startswith(_SOURCE_SCHEMES) or any(c.isspace() for c in source):
            raise ScaffoldError(
                f"--kubectrl-source {source!r}: expected a path to a kubectrl checkout or a "
                "file://, https://, git+https://, git+ssh:// URL"
            )
        return source
    path = Path(source).expanduser()
    if not path.is_absolute():
        path = (cwd or Path.cwd()) / path
    path = path.resolve()
    pyproject = path / "pyproject.toml"
    try:
        text = pyproject.read_text(encoding="utf-8")
    except OSError:
        raise ScaffoldError(
            f"--kubectrl-source {source!r}: {pyproject} cannot be read; expected the "
            "directory of a kubectrl checkout"
        ) from None
    if not re.search(r'^name\s*=\s*"kubectrl"', text, re.MULTILINE):
        raise ScaffoldError(f"--kubectrl-source {source!r}: {pyproject} is not kubectrl's")
    return path.as_uri()


def init(
    root: Path, name: str, *, domain: str = "example.com", kubectrl_source: str = ""
) -> list[Path]:
    """Scaffold a project named ``name`` in ``root``; the files written (relative paths).

    ``name`` is a DNS label (the Deployment, namespace ``<name>-system``...); its Python package
    is ``name`` with dashes made underscores. ``domain`` suffixes every API group.
    The project depends on ``kubectrl`` from the package index (at least this version), or,
    with ``kubectrl_source`` (a checkout's path or a URL, see :func:`kubectrl_source_url`), on
    ``kubectrl @ <URL>``: a project made from a checkout installs that checkout.

    Example::

        >>> import tempfile
        >>> with tempfile.TemporaryDirectory() as tmp:
        ...     files = init(Path(tmp), "guestbook", domain="my.domain")
        ...     text = (Path(tmp) / "PROJECT").read_text()
        >>> [str(p) for p in files][:3], "domain: my.domain" in text
        (['PROJECT', 'pyproject.toml', 'README.md'], True)
        >>> init(Path("."), "Guest_Book")
        Traceback (most recent call last):
        ...
        kubectrl._scaffold.ScaffoldError: project name 'Guest_Book': expected a DNS label \
(lowercase letters, digits and '-', starting with a letter, at most 56 characters)
    """
    if not _NAME.match(name) or len(name) > 56:
        raise ScaffoldError(
            f"project name {name!r}: expected a DNS label (lowercase letters, digits and '-', "
            "starting with a letter, at most 56 characters)"
        )
    package = name.replace("-", "_")
    if keyword.iskeyword(package) or package in _RESERVED_PACKAGES:
        raise ScaffoldError(f"project name {name!r}: {package!r} cannot be its Python package")
    if not _DOMAIN.match(domain) or len(domain) > 200:
        raise ScaffoldError(f"domain {domain!r}: expected a DNS subdomain such as example.com")
    if (root / _PROJECT_FILE).exists():
        raise ScaffoldError(f"{root / _PROJECT_FILE} exists: {root} is a project already")
    from kubectrl import __version__

    if kubectrl_source:
        url = kubectrl_source_url(kubectrl_source, root)
        dependency = f"kubectrl[metrics] @ {url}"
        test_dependency = f"kubectrl[test] @ {url}"
        # hatchling refuses direct references unless the project allows them.
        hatch_metadata = "\n[tool.hatch.metadata]\nallow-direct-references = true\n"
    else:
        dependency = f"kubectrl[metrics]>={__version__}"
        test_dependency = f"kubectrl[test]>={__version__}"
        hatch_metadata = ""
    values = {
        "name": name,
        "pkg": package,
        "domain": domain,
        "kubectrl_version": __version__,
        "kubectrl_dependency": dependency,
        "kubectrl_test_dependency": test_dependency,
        "hatch_metadata": hatch_metadata,
    }
    files: dict[Path, str] = {}
    for template, target in (
        ("PROJECT.tmpl", _PROJECT_FILE),
        ("pyproject.toml.tmpl", "pyproject.toml"),
        ("README.md.tmpl", "README.md"),
        ("Dockerfile.tmpl", "Dockerfile"),
        ("dockerignore.tmpl", ".dockerignore"),
        ("gitignore.tmpl", ".gitignore"),
        ("noxfile.py.tmpl", "noxfile.py"),
        ("pkg/__init__.py.tmpl", f"{package}/__init__.py"),
        ("pkg/__main__.py.tmpl", f"{package}/__main__.py"),
        ("pkg/manifests.py.tmpl", f"{package}/manifests.py"),
        ("pkg/api/__init__.py.tmpl", f"{package}/api/__init__.py"),
        ("pkg/controllers/__init__.py.tmpl", f"{package}/controllers/__init__.py"),
        ("pkg/webhooks/__init__.py.tmpl", f"{package}/webhooks/__init__.py"),
        ("api/test_manifests.py.tmpl", "tests/test_manifests.py"),
    ):
        files[Path(target)] = _render(template, values)
    return _write_all(root, files)


@dataclass
class _Project:
    root: Path
    data: dict[str, Any]

    @property
    def package(self) -> str:
        return str(self.data["package"])

    @classmethod
    def load(cls, root: Path) -> _Project:
        import yaml

        path = root / _PROJECT_FILE
        if not path.exists():
            raise ScaffoldError(
                f"no {_PROJECT_FILE} file in {root}: run python -m kubectrl init NAME there first"
            )
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
        if not isinstance(data, dict) or data.get("layout") != "kubectrl.v1":
            raise ScaffoldError(f"{path}: not a kubectrl project file (layout kubectrl.v1)")
        for key in ("projectName", "package", "domain"):
            if not isinstance(data.get(key), str):
                raise ScaffoldError(f"{path}: {key!r} is missing")
        if not isinstance(data.get("resources"), list):
            data["resources"] = []
        return cls(root, data)

    def save(self) -> None:
        import yaml

        header = "# The project's layout, read and extended by `python -m kubectrl create api`.\n"
        text = yaml.safe_dump(self.data, sort_keys=False, default_flow_style=False)
        (self.root / _PROJECT_FILE).write_text(header + text, encoding="utf-8")


def _insert_at_marker(path: Path, marker: str, line: str) -> None:
    """Insert ``line`` before the ``# +kubectrl:scaffold:<marker>`` line, at its indentation.

    The ``imports`` marker keeps the project's own imports a sorted block of their own, a blank
    line before and after it (as isort / ruff want them).
    """
    text = path.read_text(encoding="utf-8")
    lines = text.splitlines(keepends=True)
    tag = f"# +kubectrl:scaffold:{marker}"
    for index, current in enumerate(lines):
        if current.strip() != tag:
            continue
        indent = current[: len(current) - len(current.lstrip())]
        # A long line is several (a parenthesised import), as ruff format lays it out.
        new = [f"{text}\n" for text in layout(f"{indent}{line}")]
        if "".join(new) in text:
            return
        block = _import_block(lines, index - 1) if marker == "imports" and index >= 2 else None
        project = line.split(" import ")[0].rsplit(".", 1)[0]
        if marker != "imports" or index < 2 or lines[index - 1].strip():
            lines[index:index] = new
        elif block is not None and block[1] and block[1][0][0].startswith(project):
            # The block of the project's imports exists: add to it, keep it sorted.
            start, statements = block
            statements = sorted([*statements, new], key=lambda s: "".join(s))
            lines[start : index - 1] = [text for statement in statements for text in statement]
        else:
            lines[index:index] = [*new, "\n"]
        path.write_text("".join(lines), encoding="utf-8")
        return
    raise ScaffoldError(f"{path}: the marker line {tag!r} is missing; add {line!r} by hand")


def _import_block(lines: list[str], end: int) -> tuple[int, list[list[str]]] | None:
    """The ``from`` statements (one line or parenthesised) just above ``lines[end]``: the index
    of their first line and the lines of each, in order."""
    start = end
    while (
        start > 0
        and lines[start - 1].strip()
        and (lines[start - 1].startswith(("from ", " ", ")")))
    ):
        start -= 1
    statements: list[list[str]] = []
    for text in lines[start:end]:
        if text.startswith("from "):
            statements.append([text])
        elif statements:
            statements[-1].append(text)
        else:
            return None
    return start, statements


def create_api(
    root: Path,
    *,
    group: str,
    version: str,
    kind: str,
    plural: str = "",
    namespaced: bool = True,
    webhooks: bool = False,
    generate: bool = True,
) -> list[Path]:
    """Add a kind to the project in ``root``; the files written or changed (relative paths).

    A second version of a kind that exists gets its model only (``storage=False``: the first
    version stays the stored one; write its conversion as the docs' tutorial shows). With
    ``generate`` (the default) the manifests are regenerated (``python -m <package>.manifests``).
    """
    project = _Project.load(root)
    if not _NAME.match(group):
        raise ScaffoldError(f"group {group!r}: expected a lowercase DNS label such as 'ship'")
    if not _VERSION.match(version):
        raise ScaffoldError(f"version {version!r}: expected v1, v2beta1, v1alpha2 ...")
    if not _KIND.match(kind):
        raise ScaffoldError(f"kind {kind!r}: expected UpperCamelCase, such as 'Frigate'")
    plural = plural or plural_of(kind)
    if not _NAME.match(plural):
        raise ScaffoldError(f"plural {plural!r}: expected a lowercase DNS label")
    fqgroup = f"{group}.{project.data['domain']}"
    package = project.package
    module = kind.lower()
    known = project.data["resources"]
    if any(
        r.get("group") == fqgroup and r.get("kind") == kind and r.get("version") == version
        for r in known
    ):
        raise ScaffoldError(f"{fqgroup}/{version} {kind} exists already in {_PROJECT_FILE}")
    other_versions = [r for r in known if r.get("group") == fqgroup and r.get("kind") == kind]
    if any(r.get("kind") == kind and r.get("group") != fqgroup for r in known):
        raise ScaffoldError(f"kind {kind} exists in another group: one module name per kind")
    namespace_value = '"default"' if namespaced else ""
    values = {
        "name": project.data["projectName"],
        "pkg": package,
        "domain": project.data["domain"],
        "group": group,
        "fqgroup": fqgroup,
        "dashed_group": fqgroup.replace(".", "-"),
        "version": version,
        "kind": kind,
        "kind_lower": kind.lower(),
        "module": module,
        "plural": plural,
        "scope": "Namespaced" if namespaced else "Cluster",
        "ns_meta": f', "namespace": {namespace_value}' if namespaced else "",
        "ns_kw": f", namespace={namespace_value}" if namespaced else "",
        "ns_meta_env": ', "namespace": kubectrl_namespace' if namespaced else "",
        "ns_kw_env": ", namespace=kubectrl_namespace" if namespaced else "",
        "ns_arg_line": "\n            namespace=kubectrl_namespace," if namespaced else "",
    }
    files: dict[Path, str] = {}
    version_init = Path(package, "api", version, "__init__.py")
    if not (root / version_init).exists():
        files[version_init] = f'"""The {version} API models."""\n'
    model = _render("api/model.py.tmpl", values)
    if other_versions:
        model = model.replace("storage=True,", "storage=False,", 1)
    files[Path(package, "api", version, f"{module}.py")] = model
    first_version = not other_versions
    if first_version:
        files[Path(package, "controllers", f"{module}.py")] = _render(
            "api/controller.py.tmpl", values
        )
        files[Path("tests", f"test_{module}_controller.py")] = _render(
            "api/test_controller.py.tmpl", values
        )
        files[Path("tests", "integration", f"test_{module}_envtest.py")] = _render(
            "api/test_envtest.py.tmpl", values
        )
        if webhooks:
            files[Path(package, "webhooks", f"{module}.py")] = _render(
                "api/webhook.py.tmpl", values
            )
            files[Path("tests", f"test_{module}_webhook.py")] = _render(
                "api/test_webhook.py.tmpl", values
            )
    elif webhooks:
        raise ScaffoldError(
            f"{kind} has webhooks registered for its first version; a new version needs a "
            "conversion (see the tutorial), not new admission webhooks"
        )
    written = _write_all(root, files)

    api_init = root / package / "api" / "__init__.py"
    alias = f"{module}_{version}"
    _insert_at_marker(
        api_init, "imports", f"from {package}.api.{version} import {module} as {alias}"
    )
    _insert_at_marker(api_init, "models", f"{alias}.{kind},")
    changed = [api_init.relative_to(root)]
    if first_version:
        controllers_init = root / package / "controllers" / "__init__.py"
        name = f"{module}_controller"
        _insert_at_marker(
            controllers_init, "imports", f"from {package}.controllers import {module} as {name}"
        )
        _insert_at_marker(controllers_init, "reconcilers", f"{name}.{kind}Reconciler,")
        _insert_at_marker(controllers_init, "setup", f"{name}.setup(manager)")
        changed.append(controllers_init.relative_to(root))
        if webhooks:
            webhooks_init = root / package / "webhooks" / "__init__.py"
            name = f"{module}_webhooks"
            _insert_at_marker(
                webhooks_init, "imports", f"from {package}.webhooks import {module} as {name}"
            )
            _insert_at_marker(webhooks_init, "setup", f"{name}.setup(manager)")
            changed.append(webhooks_init.relative_to(root))
    known.append(
        {
            "group": fqgroup,
            "version": version,
            "kind": kind,
            "plural": plural,
            "namespaced": namespaced,
            "controller": first_version,
            "webhooks": bool(webhooks and first_version),
        }
    )
    project.save()
    changed.append(Path(_PROJECT_FILE))
    if generate:
        changed += _generate_manifests(root, package)
    return written + changed


def _generate_manifests(root: Path, package: str) -> list[Path]:
    result = subprocess.run(
        [sys.executable, "-m", f"{package}.manifests"],
        cwd=root,
        capture_output=True,
        text=True,
        check=False,
    )
    if result.returncode != 0:
        last = (result.stderr.strip().splitlines() or ["no output"])[-1]
        raise ScaffoldError(
            f"the files are written, but python -m {package}.manifests failed in {root}: {last}"
        )
    return [Path(line) for line in result.stdout.split()]
