"""``python examples/sample_controller --local --enable-webhooks``, the program itself.

It starts its own control plane, serves the webhooks with a local CA and installs them there
(``main.install_local_webhooks``); a ``v1beta1`` Foo without replicas then gets a Deployment of
1 replica from the controller: conversion, defaulting and the reconciler in one process.
"""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from kubectrl.client import BlockingClient, load_kubeconfig
from kubectrl.errors import InvalidError

from .conftest import EXAMPLE, GROUP, wait_for

pytestmark = pytest.mark.integration

DEADLINE = 120.0  # the control plane starts inside the program


@pytest.fixture
def program(tmp_path: Path) -> Iterator[tuple[subprocess.Popen[bytes], Path]]:
    log = tmp_path / "sample-controller.log"
    with log.open("wb") as out:
        proc = subprocess.Popen(
            [
                sys.executable,
                str(EXAMPLE),
                "--local",
                "--enable-webhooks",
                "--webhook-port=0",
                "--metrics-bind-address=0",
            ],
            stdout=out,
            stderr=subprocess.STDOUT,
            env={**os.environ, "PYTHONUNBUFFERED": "1"},
        )
    try:
        yield proc, log
    finally:
        if proc.poll() is None:
            proc.send_signal(signal.SIGTERM)
            try:
                proc.wait(timeout=60)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()


def test_the_program_serves_and_installs_its_webhooks_on_its_local_control_plane(
    program: tuple[subprocess.Popen[bytes], Path],
) -> None:
    proc, log = program

    def installed() -> re.Match[str] | None:
        assert proc.poll() is None, f"the program exited:\n{log.read_text()}"
        text = log.read_text()
        assert "installing the webhooks on the local control plane failed" not in text, text
        if "webhooks installed" not in text:
            return None
        return re.search(r"export KUBECONFIG=(\S+)", text)

    found = wait_for("the program's 'webhooks installed' log line", installed, DEADLINE)
    with BlockingClient(load_kubeconfig(found.group(1))) as client:
        client.create(
            {
                "apiVersion": f"{GROUP}/v1beta1",
                "kind": "Foo",
                "metadata": {"name": "local", "namespace": "default"},
                "spec": {"deployment": {"name": "local-nginx"}},
            }
        )
        deployment = wait_for(
            "the Foo's Deployment",
            lambda: client.get(("apps/v1", "Deployment"), "local-nginx", namespace="default"),
        )
        assert deployment["spec"]["replicas"] == 1
        stored = client.get((f"{GROUP}/v1alpha1", "Foo"), "local", namespace="default")
        assert stored["spec"] == {"deploymentName": "local-nginx", "replicas": 1}
        with pytest.raises(InvalidError, match=re.escape("spec.deploymentName: Required value")):
            client.create(
                {
                    "apiVersion": f"{GROUP}/v1alpha1",
                    "kind": "Foo",
                    "metadata": {"name": "nameless", "namespace": "default"},
                    "spec": {"replicas": 1},
                }
            )
