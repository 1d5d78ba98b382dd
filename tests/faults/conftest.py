"""Fixtures for the fault-injection tests: the Foo CRD, the chaos proxy, controller processes."""

from __future__ import annotations

import collections
import os
import re
import subprocess
import sys
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import IO

import pytest

from kubectrl.envtest import ControlPlane

from .chaos_proxy import ChaosProxy

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "examples" / "sample_controller"
ARTIFACTS = EXAMPLE / "artifacts"

# A log record of the sample controller starts with its asctime ("2026-01-02 03:04:05,678").
_RECORD_START = re.compile(r"^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d,\d+ ")
_ERROR_NAME = re.compile(r"\b([A-Z]\w*(?:Error|Exception))\b")
# An API error's message says "<Reason> (<code>)", e.g. "Conflict (409)".
_API_REASON = re.compile(r": ([A-Z]\w*) \((\d{3})\)")


@pytest.fixture(scope="module")
def foo_crd(control_plane: ControlPlane) -> None:
    control_plane.install_crds([ARTIFACTS / "crd.yaml"])


@pytest.fixture
def chaos_proxy(control_plane: ControlPlane) -> Iterator[ChaosProxy]:
    with ChaosProxy(control_plane.kubeconfig) as proxy:
        yield proxy


class Process:
    """A subprocess whose merged stdout/stderr is collected line by line by a thread."""

    def __init__(self, argv: list[str], env: dict[str, str] | None = None) -> None:
        self.proc = subprocess.Popen(
            argv,
            cwd=ROOT,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            env={**os.environ, "PYTHONUNBUFFERED": "1", **(env or {})},
        )
        self.lines: list[str] = []
        self._lock = threading.Lock()
        assert self.proc.stdout is not None
        self._reader = threading.Thread(target=self._read, args=(self.proc.stdout,), daemon=True)
        self._reader.start()

    def _read(self, stream: IO[str]) -> None:
        for line in stream:
            with self._lock:
                self.lines.append(line.rstrip("\n"))

    def output(self) -> list[str]:
        with self._lock:
            return list(self.lines)

    def tail(self, count: int = 40) -> str:
        return "\n".join(self.output()[-count:])

    def stop(self, timeout: float = 60) -> int:
        """SIGTERM, wait (SIGKILL after ``timeout``); the exit code."""
        if self.proc.poll() is None:
            self.proc.terminate()
        try:
            code = self.proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            code = self.proc.wait()
        self._reader.join(timeout=10)
        return code


@pytest.fixture
def processes() -> Iterator[Callable[..., Process]]:
    """Start subprocesses that are killed (if still running) at the end of the test."""
    started: list[Process] = []

    def start(argv: list[str], env: dict[str, str] | None = None) -> Process:
        process = Process(argv, env)
        started.append(process)
        return process

    yield start
    for process in started:
        if process.proc.poll() is None:
            process.proc.kill()
            process.proc.wait()


def sample_controller_argv(kubeconfig: Path, *flags: str) -> list[str]:
    """The sample controller's command line; no /metrics (a port other tests may hold)."""
    argv = [sys.executable, str(EXAMPLE), "--kubeconfig", str(kubeconfig)]
    return [*argv, "--metrics-bind-address", "0", *flags]


def reconcile_errors(lines: list[str]) -> collections.Counter[str]:
    """Count the controller's "Reconciler error" records by the error they name.

    A record is a first line with a timestamp and any continuation lines (a traceback); its kind
    is the API reason it names (``Conflict``, ``AlreadyExists``, ...), else the last ``...Error``
    name in it (a transport error's cause, or the innermost exception of a traceback), else
    ``"other"``.
    """
    counts: collections.Counter[str] = collections.Counter()
    record: list[str] = []

    def flush() -> None:
        if record and "Reconciler error" in record[0]:
            text = "\n".join(record)
            reasons = _API_REASON.findall(text)
            names = _ERROR_NAME.findall(text)
            counts[reasons[-1][0] if reasons else names[-1] if names else "other"] += 1

    for line in lines:
        if _RECORD_START.match(line):
            flush()
            record = [line]
        elif record:
            record.append(line)
    flush()
    return counts
