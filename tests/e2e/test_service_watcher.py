"""End to end: run examples/service_watcher as a subprocess against the local control plane."""

from __future__ import annotations

import os
import queue
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from kubectrl.envtest import ControlPlane

pytestmark = pytest.mark.integration

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "service_watcher"
DEADLINE = 60.0


class Lines:
    """stdout lines of a subprocess, read in a thread so waits can have deadlines."""

    def __init__(self, proc: subprocess.Popen[str]) -> None:
        self.proc = proc
        self.queue: queue.Queue[str] = queue.Queue()
        self.seen: list[str] = []
        assert proc.stdout is not None
        self.thread = threading.Thread(target=self._read, args=(proc.stdout,), daemon=True)
        self.thread.start()

    def _read(self, stream: object) -> None:
        for line in stream:  # type: ignore[attr-defined]
            self.queue.put(line.rstrip("\n"))

    def expect(self, prefix: str) -> str:
        deadline = time.monotonic() + DEADLINE
        while True:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise AssertionError(f"no line starting with {prefix!r}; saw {self.seen}")
            try:
                line = self.queue.get(timeout=min(remaining, 1.0))
            except queue.Empty:
                if self.proc.poll() is not None:
                    raise AssertionError(
                        f"watcher exited {self.proc.returncode}; saw {self.seen}"
                    ) from None
                continue
            self.seen.append(line)
            if line.startswith(prefix):
                return line


@pytest.fixture
def watcher(kubectrl_control_plane: ControlPlane, kubectrl_namespace: str) -> Iterator[Lines]:
    namespace = kubectrl_namespace
    env = dict(os.environ, PYTHONUNBUFFERED="1")
    env.pop("KUBECONFIG", None)
    proc = subprocess.Popen(
        [
            sys.executable,
            str(EXAMPLE),
            "--kubeconfig",
            str(kubectrl_control_plane.kubeconfig.path),
            "--namespace",
            namespace,
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
    )
    try:
        yield Lines(proc)
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def test_service_watcher_prints_add_update_delete(
    kubectrl_control_plane: ControlPlane, kubectrl_namespace: str, watcher: Lines
) -> None:
    namespace = kubectrl_namespace
    assert watcher.expect("# synced") == f"# synced 0 services in namespace {namespace}"
    base = f"/api/v1/namespaces/{namespace}/services"
    with kubectrl_control_plane.http_client() as http:
        created = http.post(
            base,
            json={
                "apiVersion": "v1",
                "kind": "Service",
                "metadata": {"name": "web", "labels": {"app": "web"}},
                "spec": {"ports": [{"port": 80, "protocol": "TCP"}], "selector": {"app": "web"}},
            },
        )
        assert created.status_code == 201, created.text
        assert watcher.expect("ADDED") == f"ADDED {namespace}/web type=ClusterIP ports=80/TCP"

        patched = http.patch(
            f"{base}/web",
            json={"metadata": {"labels": {"tier": "front"}}},
            headers={"Content-Type": "application/merge-patch+json"},
        )
        assert patched.status_code == 200, patched.text
        assert watcher.expect("UPDATED") == f"UPDATED {namespace}/web changed: metadata.labels.tier"

        deleted = http.delete(f"{base}/web")
        assert deleted.status_code == 200, deleted.text
        assert watcher.expect("DELETED") == f"DELETED {namespace}/web"
    assert [line.split()[0] for line in watcher.seen] == ["#", "ADDED", "UPDATED", "DELETED"]


def test_service_watcher_reports_a_bad_kubeconfig(tmp_path: Path) -> None:
    missing = tmp_path / "nope.kubeconfig"
    result = subprocess.run(
        [sys.executable, str(EXAMPLE), "--kubeconfig", str(missing)],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert result.returncode == 1
    assert "service_watcher:" in result.stderr
    assert str(missing) in result.stderr
