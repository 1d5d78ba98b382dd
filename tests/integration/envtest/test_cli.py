"""`python -m kubectrl.envtest start|env|status|stop` from a shell's point of view."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import httpx
import pytest

from kubectrl.envtest import find_binaries

pytestmark = pytest.mark.integration


def run(env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "kubectrl.envtest", *args],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def test_start_env_status_stop(tmp_path: Path) -> None:
    binaries = find_binaries(build=False)
    env = {
        **os.environ,
        "KUBECTRL_CACHE_DIR": str(tmp_path / "cache"),  # its own state file
        "TEST_ASSET_ETCD": str(binaries.etcd),
        "TEST_ASSET_KUBE_APISERVER": str(binaries.kube_apiserver),
    }
    started = run(env, "start")
    try:
        assert started.returncode == 0, started.stdout + started.stderr
        kubeconfig = Path(run(env, "env", "--kubeconfig").stdout.strip())
        assert f"export KUBECONFIG={kubeconfig}" in run(env, "env").stdout
        assert f"kubeconfig:     {kubeconfig}" in started.stdout

        status = json.loads(run(env, "status").stdout)
        data = json.loads(kubeconfig.read_text())
        server = data["clusters"][0]["cluster"]["server"]
        assert status["server"] == server
        # Reachable with the printed kubeconfig, by a client that knows nothing of kubectrl.
        from kubernetes import client, config

        api = client.VersionApi(config.new_client_from_config(config_file=str(kubeconfig)))
        assert api.get_code().git_version.startswith("v1.")

        again = run(env, "start")
        assert "already running" in again.stdout
    finally:
        stopped = run(env, "stop")
    assert stopped.returncode == 0, stopped.stdout + stopped.stderr
    assert "stopped" in stopped.stdout
    assert run(env, "status").returncode == 1
    assert not Path(status["work_dir"]).exists()
    with pytest.raises(httpx.ConnectError):
        httpx.get(f"{server}/readyz", verify=False, timeout=2)
