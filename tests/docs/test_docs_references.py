"""What the docs tell a reader to import or run exists: no private module paths, no commands that
fail before they start.

* A dotted name with a private part (``kubectrl.envtest._cluster.cri_log_line``, ``from
  kubectrl.workqueue._priority import ...``) is no API: it moves or goes away without notice, and
  a reader who copies it breaks at the next release. The docs name the public path. A page that
  must name a private module is in ``ALLOWED`` with the reason (the pages about the internals:
  all their names), and every private name it gives must still import.
* ``python -m kubectrl ...`` and ``python -m kubectrl.envtest ...`` name subcommands and options
  the CLIs have; ``python -m kubectrl.<module>`` names a module that runs as a program; ``nox -s
  NAME`` a session of noxfile.py.
"""

from __future__ import annotations

import ast
import contextlib
import importlib
import importlib.util
import io
import re
from collections.abc import Callable, Iterator, Sequence
from functools import cache
from pathlib import Path

import pytest
from docs_blocks import DOCS, ROOT, pages, resolve

#: (page, name) -> why the page names a private module; name ``"*"``: every name on the page.
ALLOWED: dict[tuple[str, str], str] = {
    ("docs/architecture.md", "*"): (
        "the page draws the internals, module by module; tests/docs/test_architecture.py imports "
        "every name it draws and tests/unit/client/test_request_path.py runs the request path"
    ),
    ("docs/performance.md", "*"): (
        "the page reports what was measured and changed inside the library, for its developers"
    ),
    ("docs/client.md", "kubectrl.client._kind_table"): (
        "a maintainer's command: the built-in kinds table is regenerated from a live server by "
        "running this module, which has no public entry point"
    ),
}

#: Subcommands whose arguments go to another program (kubectl's own options), not checked.
PASSTHROUGH = {("kubectrl.envtest", "kubectl")}

# A dotted kubectrl name with a private part (``_x``, not a dunder such as ``__main__``).
_PRIVATE = re.compile(r"\bkubectrl(?:\.\w+)*?\.(?!__)_\w+(?:\.\w+)*")
# ``from kubectrl.x import _y``: a private name imported from a public module.
_PRIVATE_IMPORT = re.compile(r"\bfrom\s+(kubectrl(?:\.\w+)*)\s+import\s+\(?([^\n)]*)")
_COMMAND = re.compile(r"\bpython3?\s+-m\s+(kubectrl(?:\.\w+)*)([^\n`#|;&]*)")
_NOX = re.compile(r"\bnox\s+-s\s+([\w.-]+)")
_CHOICES = re.compile(r"\{([\w,-]+)\}")


def sources() -> list[Path]:
    """Every page of the site, and the README (the repository's front page)."""
    return [*pages(), ROOT / "README.md"]


def _where(path: Path) -> str:
    return path.relative_to(ROOT).as_posix()


def private_names(text: str) -> Iterator[tuple[int, str]]:
    """``(line, name)`` of every private module path or private import in ``text``."""
    for number, line in enumerate(text.splitlines(), start=1):
        for match in _PRIVATE.finditer(line):
            yield number, match.group(0)
        for match in _PRIVATE_IMPORT.finditer(line):
            for imported in match.group(2).split(","):
                name = imported.strip().split(" as ")[0].strip()
                if name.startswith("_") and not name.startswith("__"):
                    yield number, f"{match.group(1)}.{name}"


def logical_lines(text: str) -> Iterator[tuple[int, str]]:
    """``(number, line)`` of ``text``, a line whose inline code span goes on to the next line
    (an odd number of backticks, not a fence) joined with it."""
    lines = text.splitlines()
    number = 0
    while number < len(lines):
        first, line = number + 1, lines[number]
        while (
            line.count("`") % 2
            and not line.lstrip().startswith("```")
            and number + 1 < len(lines)
            and not lines[number + 1].lstrip().startswith("```")
        ):
            number += 1
            line = f"{line} {lines[number].strip()}"
        yield first, line
        number += 1


def commands(text: str, pattern: re.Pattern[str]) -> Iterator[tuple[int, re.Match[str]]]:
    for number, line in logical_lines(text):
        for match in pattern.finditer(line):
            yield number, match


def test_the_scanner_finds_private_paths_and_imports() -> None:
    text = (
        "see `kubectrl.envtest._cluster.cri_log_line` and `kubectrl._clock.Clock`\n"
        "from kubectrl.workqueue._priority import PriorityQueue\n"
        "from kubectrl import FakeClock, _clock as clock\n"
        "public: kubectrl.envtest.cri_log_line, Foo.__kubectrl_kind__, kubectrl.__main__\n"
    )
    assert list(private_names(text)) == [
        (1, "kubectrl.envtest._cluster.cri_log_line"),
        (1, "kubectrl._clock.Clock"),
        (2, "kubectrl.workqueue._priority"),
        (3, "kubectrl._clock"),
    ]


def test_no_page_names_a_private_module() -> None:
    found = []
    for path in sources():
        where = _where(path)
        if (where, "*") in ALLOWED:
            continue
        for line, name in private_names(path.read_text(encoding="utf-8")):
            if (where, name) not in ALLOWED:
                found.append(f"{where}:{line}: {name}")
    assert not found, (
        "the docs name private modules; name the public path (what the package's __init__ "
        "exports), or add (page, name) to ALLOWED with the reason:\n" + "\n".join(found)
    )


def test_every_allowed_private_name_exists() -> None:
    missing = []
    for (where, name), reason in ALLOWED.items():
        assert reason
        page = (ROOT / where).read_text(encoding="utf-8")
        if name != "*":
            assert name in page, f"{where} no longer names {name}: drop it from ALLOWED"
        for line, found in private_names(page):
            if name not in ("*", found):
                continue
            try:
                resolve(found)
            except (ImportError, AttributeError) as err:
                missing.append(f"{where}:{line}: {found}: {type(err).__name__}: {err}")
    assert not missing, "the docs name what the code no longer has:\n" + "\n".join(missing)


def test_resolve_rejects_a_name_that_does_not_exist() -> None:
    assert (
        resolve("kubectrl.envtest.cri_log_line")
        is importlib.import_module("kubectrl.envtest").cri_log_line
    )
    with pytest.raises(AttributeError):
        resolve("kubectrl.envtest._cluster.no_such_function")
    with pytest.raises(ModuleNotFoundError):
        resolve("no_such_package._x")


# -- commands -------------------------------------------------------------------------------


@cache
def cli_help(module: str, path: tuple[str, ...]) -> str:
    """What ``python -m module *path --help`` prints (argparse's help, run in this process)."""
    main: Callable[[Sequence[str]], object] = importlib.import_module(f"{module}.__main__").main
    out = io.StringIO()
    with contextlib.redirect_stdout(out), pytest.raises(SystemExit) as exited:
        main([*path, "--help"])
    assert exited.value.code == 0, f"python -m {module} {' '.join(path)} --help failed"
    return out.getvalue()


def subcommands(help_text: str) -> set[str]:
    """The subcommands a usage line offers (``{start,stop,...}``); empty when it has none."""
    usage = help_text.split("\n\n", 1)[0]
    return {name for group in _CHOICES.findall(usage) for name in group.split(",")}


def check_cli(module: str, arguments: str) -> str | None:
    """Why ``python -m module arguments`` cannot run, or None: its subcommands and options are
    the CLI's own. Without arguments the page names the program, not a command: not checked."""
    words = [word.strip("'\")") for word in arguments.split()]
    if not words:
        return None
    path: list[str] = []
    while True:
        offered = subcommands(cli_help(module, tuple(path)))
        if not offered:
            break
        if not words or words[0] not in offered:
            given = words[0] if words else "nothing"
            return f"needs one of the subcommands {sorted(offered)}, got {given}"
        path.append(words.pop(0))
        if (module, path[0]) in PASSTHROUGH:
            return None
    help_text = cli_help(module, tuple(path))
    unknown = [word.split("=")[0] for word in words if word.startswith("--")]
    unknown = [option for option in unknown if option not in help_text]
    if unknown:
        return f"{' '.join(path)} has no option {', '.join(unknown)}"
    return None


def runnable(module: str) -> bool:
    """Whether ``python -m module`` runs something: a package with a ``__main__``, or a module
    with an ``if __name__ == "__main__":`` block."""
    spec = importlib.util.find_spec(module)
    if spec is None:
        return False
    if spec.submodule_search_locations is not None:
        return importlib.util.find_spec(f"{module}.__main__") is not None
    assert spec.origin is not None
    tree = ast.parse(Path(spec.origin).read_text(encoding="utf-8"))
    return any(
        isinstance(node, ast.If) and "__main__" in ast.unparse(node.test) for node in tree.body
    )


def test_the_cli_check_refuses_what_the_cli_refuses() -> None:
    assert check_cli("kubectrl.envtest", "start --cluster --nodes 2") is None
    assert check_cli("kubectrl.envtest", "") is None  # the program named, not a command
    assert check_cli("kubectrl.envtest", "kubectl --name x get pods -A") is None
    assert check_cli("kubectrl", "create api --group batch --version v1 --kind CronJob") is None
    assert "subcommands" in (check_cli("kubectrl.envtest", "--cluster") or "")
    assert "subcommands" in (check_cli("kubectrl", "create --group x") or "")
    assert "--clusters" in (check_cli("kubectrl.envtest", "start --clusters") or "")
    assert runnable("kubectrl.envtest")
    assert not runnable("kubectrl.crd")


def test_every_python_m_command_runs() -> None:
    wrong = []
    for path in sources():
        for line, match in commands(path.read_text(encoding="utf-8"), _COMMAND):
            module, arguments = match.group(1), match.group(2)
            where = f"{_where(path)}:{line}: python -m {module}{arguments.rstrip()}"
            if module in ("kubectrl", "kubectrl.envtest"):
                problem = check_cli(module, arguments)
                if problem:
                    wrong.append(f"{where}: {problem}")
            elif not runnable(module):
                wrong.append(f"{where}: {module} does not run as a program")
    assert not wrong, "\n".join(wrong)


def nox_sessions(noxfile: Path) -> set[str]:
    """The sessions a noxfile declares (``@nox.session``, ``name=`` when given)."""
    sessions = set()
    for node in ast.walk(ast.parse(noxfile.read_text(encoding="utf-8"))):
        if not isinstance(node, ast.FunctionDef):
            continue
        for decorator in node.decorator_list:
            call = decorator if isinstance(decorator, ast.Call) else None
            if ast.unparse(call.func if call else decorator) != "nox.session":
                continue
            names = [k.value for k in call.keywords if k.arg == "name"] if call else []
            sessions.add(ast.literal_eval(names[0]) if names else node.name)
    return sessions


def test_every_nox_session_named_exists() -> None:
    repository = nox_sessions(ROOT / "noxfile.py")
    assert {"docs", "tests", "tests-unit"} <= repository
    # The tutorials' `nox -s` runs in the project `python -m kubectrl init` generates.
    project = nox_sessions(ROOT / "src/kubectrl/_scaffold/templates/noxfile.py.tmpl")
    assert {"tests", "integration", "manifests"} <= project
    wrong = []
    for path in sources():
        tutorial = path.parent.name.startswith("tutorial")
        sessions = repository | project if tutorial else repository
        for line, match in commands(path.read_text(encoding="utf-8"), _NOX):
            if match.group(1) not in sessions:
                wrong.append(f"{_where(path)}:{line}: nox -s {match.group(1)} ({sorted(sessions)})")
    assert not wrong, "no such nox session:\n" + "\n".join(wrong)


def test_an_inline_command_broken_across_lines_is_read_whole() -> None:
    text = "run `python -m kubectrl.envtest\n   binaries` first\n```bash\nnox -s docs\n```\n"
    found = [(line, m.group(0)) for line, m in commands(text, _COMMAND)]
    assert found == [(1, "python -m kubectrl.envtest binaries")]
    assert [m.group(1) for _, m in commands(text, _NOX)] == ["docs"]


def test_the_docs_directory_is_scanned() -> None:
    assert DOCS / "index.md" in sources()
    assert len(sources()) > 40
