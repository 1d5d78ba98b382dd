"""The wardle extension API server behind a real kube-apiserver, with real kubectl.

One scenario run (``scenario.py``) per module, in a network namespace it gets from
``unshare -n``: kube-apiserver's aggregator refuses loopback endpoint addresses, so the server
binds 192.0.2.10 on that namespace's ``lo``, where etcd, kube-apiserver and every client run
too; no packet leaves the namespace. The run reports each check; the tests below assert them.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

pytestmark = pytest.mark.integration

SCENARIO = Path(__file__).with_name("scenario.py")


@pytest.fixture(scope="module")
def report() -> dict[str, dict[str, Any]]:
    unshare = shutil.which("unshare")
    if unshare is None or subprocess.run([unshare, "-n", "true"], check=False).returncode:
        pytest.skip("needs `unshare -n` (util-linux, and the right to make a network namespace)")
    env = {**os.environ, "KUBECTRL_NETNS": "1"}
    done = subprocess.run(
        [unshare, "-n", sys.executable, str(SCENARIO)],
        capture_output=True,
        text=True,
        env=env,
        timeout=900,
        check=False,
    )
    assert done.returncode == 0, f"scenario failed ({done.returncode}): {done.stderr[-3000:]}"
    lines = done.stdout.strip().splitlines()
    assert lines, f"the scenario reported nothing: {done.stderr[-3000:]}"
    results: dict[str, dict[str, Any]] = json.loads(lines[-1])
    assert "scenario_crashed" not in results, results["scenario_crashed"]["detail"]
    return results


def check(report: dict[str, dict[str, Any]], *names: str) -> None:
    failed = {
        n: report.get(n, {"detail": "not run"})["detail"]
        for n in names
        if not report.get(n, {}).get("ok")
    }
    crashed = {n: r["detail"] for n, r in report.items() if n.endswith("_crashed")}
    log = report.get("server_log", {}).get("detail", "")
    assert not failed, f"{failed}\ncrashed steps: {crashed}\nserver log: {log}"


def test_the_apiservice_becomes_available(report: dict[str, dict[str, Any]]) -> None:
    check(report, "apiservice_available")


def test_kubectl_get_create_apply_patch_delete_explain(report: dict[str, dict[str, Any]]) -> None:
    check(
        report,
        "get_empty",
        "create",
        "apply",
        "apply_server_side",
        "apply_field_validation",
        "patch",
        "get_table",
        "explain",
        "delete",
    )


def test_kubectl_get_watch_prints_new_objects(report: dict[str, dict[str, Any]]) -> None:
    check(report, "get_watch")


def test_the_admission_rule_refuses_a_banned_name(report: dict[str, dict[str, Any]]) -> None:
    check(report, "admission")


def test_rbac_403_then_200_and_a_bypass_is_401(report: dict[str, dict[str, Any]]) -> None:
    check(report, "rbac_denied", "rbac_allowed", "bypass_unauthorized")


def test_informer_and_controller_survive_a_server_restart(
    report: dict[str, dict[str, Any]],
) -> None:
    check(
        report,
        "controller_converges",
        "apiservice_goes_unavailable",
        "apiservice_available_again",
        "controller_converges_after_restart",
        "informer_resumes_exactly",
    )
