"""Every Python block of docs/**/*.md runs (or is type-checked), so the docs cannot rot.

The blocks of a page run in order in one module namespace, like a doctest session; see
``docs_blocks.py`` for the markers that type-check, run against envtest or skip a block.
Tracebacks point at the Markdown page and line.
"""

from __future__ import annotations

import ast
import asyncio
import inspect
import os
import re
import signal
import subprocess
import sys
import types
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
from docs_blocks import DOCS, ROOT, Block, MarkerError, blocks, pages

# A block must finish quickly; one that hangs (a forgotten `manager.run()`) fails with its place.
BLOCK_TIMEOUT = 60.0
ENVTEST_BLOCK_TIMEOUT = 180.0

MYPY_CONFIG = """\
[mypy]
python_version = 3.10
check_untyped_defs = True
allow_redefinition = True
warn_unused_ignores = False
disable_error_code = no-redef

[mypy-kubernetes.*]
ignore_missing_imports = True

[mypy-prometheus_client.*]
ignore_missing_imports = True
"""


def _page_id(page: Path) -> str:
    return page.relative_to(DOCS).as_posix()


def _page_params() -> list[object]:
    """The pages with blocks to run; those with envtest blocks are marked ``integration``."""
    params: list[object] = []
    for page in _runnable_pages():
        try:
            needs_cluster = any(block.mode == "envtest" for block in blocks(page))
        except MarkerError:
            needs_cluster = False
        marks = [pytest.mark.integration] if needs_cluster else []
        params.append(pytest.param(page, marks=marks, id=_page_id(page)))
    return params


def _runnable_pages() -> list[Path]:
    found = []
    for page in pages():
        try:
            page_blocks = blocks(page)
        except MarkerError:
            found.append(page)  # reported by test_markers_are_valid and by the page's own test
            continue
        if any(block.mode != "file" for block in page_blocks):
            found.append(page)
    return found


@contextmanager
def _deadline(block: Block, seconds: float) -> Iterator[None]:
    """Fails a block running longer than ``seconds`` (SIGALRM; tests run in the main thread)."""

    def expired(signum: int, frame: types.FrameType | None) -> None:
        raise TimeoutError(f"{block.where}: the block ran for more than {seconds:.0f} s")

    previous = signal.signal(signal.SIGALRM, expired)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


def _close(loop: asyncio.AbstractEventLoop) -> None:
    """Cancels what the page's blocks left running, then closes their loop."""
    pending = asyncio.all_tasks(loop)
    for task in pending:
        task.cancel()
    if pending:
        loop.run_until_complete(asyncio.gather(*pending, return_exceptions=True))
    loop.run_until_complete(loop.shutdown_asyncgens())
    loop.close()


def _typecheck_file(page: Path, page_blocks: list[Block], directory: Path) -> Path:
    """One module per page: its executed and type-checked blocks, each at its own line.

    The blocks form the body of one ``async def``, so that top-level ``await``, ``async for``
    and ``async with`` are checked as the runner runs them (mypy refuses them in a module).
    """
    lines = ["async def _page() -> None:"]
    for block in page_blocks:
        if block.mode not in ("run", "envtest", "typecheck"):
            continue
        while len(lines) < block.line - 1:
            lines.append("")
        for line in block.source.splitlines():
            if line.strip() == "from __future__ import annotations":
                line = ""
            lines.append(f"    {line}" if line.strip() else "")
    module = re.sub(r"\W", "_", _page_id(page).removesuffix(".md"))
    path = directory / f"docs_{module}.py"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


@pytest.fixture(scope="session")
def mypy_errors(tmp_path_factory: pytest.TempPathFactory) -> dict[str, list[str]]:
    """mypy's messages on the typecheck blocks, by page, from one mypy run over all pages."""
    directory = tmp_path_factory.mktemp("docs-typecheck")
    files: dict[Path, tuple[Path, list[Block]]] = {}
    for page in _runnable_pages():
        page_blocks = blocks(page)
        if any(block.mode == "typecheck" for block in page_blocks):
            files[_typecheck_file(page, page_blocks, directory)] = (page, page_blocks)
    if not files:
        return {}
    config = directory / "mypy.ini"
    config.write_text(MYPY_CONFIG, encoding="utf-8")
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "mypy",
            "--config-file",
            str(config),
            "--cache-dir",
            str(ROOT / ".mypy_cache" / "docs-blocks"),
            "--no-error-summary",
            "--show-error-codes",
            *map(str, files),
        ],
        capture_output=True,
        text=True,
        cwd=directory,
        check=False,
    )
    errors: dict[str, list[str]] = {}
    message = re.compile(r"^(?P<file>[^:]+\.py):(?P<line>\d+): (?P<text>.*)$")
    for line in result.stdout.splitlines():
        match = message.match(line)
        if match is None or " note: " in f" {match.group('text')}":
            continue
        path = directory / Path(match.group("file")).name
        if path not in files:
            continue
        page, page_blocks = files[path]
        number = int(match.group("line"))
        for block in page_blocks:
            end = block.line + len(block.source.splitlines())
            if block.mode == "typecheck" and block.line <= number < end:
                where = f"{page.relative_to(ROOT)}:{number}"
                errors.setdefault(_page_id(page), []).append(f"{where}: {match.group('text')}")
    if result.returncode not in (0, 1):
        raise RuntimeError(f"mypy failed to run on the docs blocks:\n{result.stderr}")
    return errors


def test_markers_are_valid() -> None:
    """Every `docs-test:` comment is one the runner knows; `file:` blocks live in the tutorial."""
    problems: list[str] = []
    for page in pages():
        try:
            page_blocks = blocks(page)
        except MarkerError as exc:
            problems.append(str(exc))
            continue
        for block in page_blocks:
            section = page.relative_to(DOCS).parts[0]
            if block.mode == "file" and section not in ("tutorial", "tutorial-cronjob"):
                problems.append(f"{block.where}: `<!-- file: -->` blocks belong to docs/tutorial")
    assert not problems, "\n".join(problems)


@pytest.mark.parametrize("page", _page_params())
def test_page_blocks(
    page: Path,
    request: pytest.FixtureRequest,
    monkeypatch: pytest.MonkeyPatch,
    mypy_errors: dict[str, list[str]],
) -> None:
    """The page's blocks run in order in one namespace; its typecheck blocks pass mypy."""
    page_blocks = blocks(page)
    name = "docs_" + re.sub(r"\W", "_", _page_id(page).removesuffix(".md"))
    module = types.ModuleType(name)
    module.__file__ = str(page)
    # A real module, so that dataclasses and pydantic resolve the blocks' annotations.
    monkeypatch.setitem(sys.modules, name, module)
    monkeypatch.chdir(ROOT)
    # Blocks may `await` at top level (as in `python -m asyncio`): the page's blocks share one
    # event loop, so an informer started in one block still runs in the next.
    loop = asyncio.new_event_loop()
    request.addfinalizer(lambda: _close(loop))
    for block in page_blocks:
        if block.mode in ("skip", "file", "typecheck"):
            continue
        timeout = BLOCK_TIMEOUT
        if block.mode == "envtest":
            kubeconfig = request.getfixturevalue("kubeconfig")
            monkeypatch.setenv("KUBECONFIG", os.fspath(kubeconfig))
            timeout = ENVTEST_BLOCK_TIMEOUT
        code = compile(
            "\n" * (block.line - 1) + block.source,
            str(page),
            "exec",
            flags=ast.PyCF_ALLOW_TOP_LEVEL_AWAIT,
        )
        with _deadline(block, timeout):
            result = eval(code, module.__dict__)  # running the docs is the point
            if inspect.iscoroutine(result):  # the block awaits at top level
                loop.run_until_complete(result)
        if block.mode == "envtest":
            monkeypatch.delenv("KUBECONFIG")
    problems = mypy_errors.get(_page_id(page), [])
    assert not problems, "mypy on the page's typecheck blocks:\n" + "\n".join(problems)
