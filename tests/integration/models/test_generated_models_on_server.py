"""Generated models against a real kube-apiserver: each corpus CRD is installed as written (not
regenerated), objects are created through the generated models and read back field for field.
"""

from __future__ import annotations

import importlib.util
import io
import os
import sys
from collections.abc import Iterator
from contextlib import redirect_stdout
from pathlib import Path
from typing import Any

import httpx
import pytest
import yaml

from kubectrl import models
from kubectrl.__main__ import main
from kubectrl.envtest import ControlPlane
from kubectrl.resources import CustomResource


def _corpus_module() -> Any:
    """The unit tests' corpus helpers (tests/unit/models/corpus.py), shared by path."""
    path = Path(__file__).resolve().parents[2] / "unit" / "models" / "corpus.py"
    spec = importlib.util.spec_from_file_location("_kubectrl_models_corpus", path)
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


corpus = _corpus_module()

pytestmark = pytest.mark.integration

SAMPLES = corpus.THIRD_PARTY / "samples" / "objects.yaml"


def _samples() -> list[dict[str, Any]]:
    return [s for s in yaml.safe_load_all(SAMPLES.read_text(encoding="utf-8")) if s]


def _sample_id(sample: dict[str, Any]) -> str:
    return f"{sample['kind']}-{sample['apiVersion'].rsplit('/', 1)[-1]}"


@pytest.fixture(scope="module")
def installed(
    control_plane: ControlPlane, tmp_path_factory: pytest.TempPathFactory
) -> dict[tuple[str, str], type[CustomResource]]:
    """Every corpus CRD installed; the generated class for each (apiVersion, kind)."""
    crds = tmp_path_factory.mktemp("corpus_crds")
    code = tmp_path_factory.mktemp("corpus_models")
    classes: dict[tuple[str, str], type[CustomResource]] = {}
    for name, definition in corpus.corpus().items():
        (crds / f"{name}.yaml").write_text(yaml.safe_dump(definition), encoding="utf-8")
        module = corpus.load(corpus.write(definition, code))
        for cls in corpus.resources(module):
            classes[(cls.__kubectrl_kind__.api_version, cls.__kubectrl_kind__.kind)] = cls
    control_plane.install_crds(sorted(crds.iterdir()), timeout=60.0)
    return classes


@pytest.fixture
def http(control_plane: ControlPlane) -> Iterator[httpx.Client]:
    with control_plane.http_client() as client:
        yield client


def _collection(cls: type[CustomResource], namespace: str) -> str:
    info = cls.__kubectrl_kind__
    base = f"/apis/{info.group}/{info.version}"
    if info.namespaced:
        return f"{base}/namespaces/{namespace}/{info.plural}"
    return f"{base}/{info.plural}"


def _comparable(body: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in body.items() if k not in ("metadata", "status")}


def _missing(wanted: Any, got: Any, path: str = "") -> Iterator[str]:
    """What of ``wanted`` is not in ``got`` (objects may have more keys; numbers compare as
    numbers)."""
    if isinstance(wanted, dict) and isinstance(got, dict):
        for key, value in wanted.items():
            if key not in got:
                yield f"{path}.{key}: missing"
            else:
                yield from _missing(value, got[key], f"{path}.{key}")
    elif isinstance(wanted, list) and isinstance(got, list) and len(wanted) == len(got):
        for index, (w, g) in enumerate(zip(wanted, got, strict=True)):
            yield from _missing(w, g, f"{path}[{index}]")
    elif wanted != got:
        yield f"{path}: {wanted!r} sent as {got!r}"


def test_every_served_version_of_the_corpus_has_a_sample() -> None:
    """One sample per served version; a version converted by a webhook (there is none here) is
    left out unless it is the stored one."""
    wanted = {
        (f"{d['spec']['group']}/{v['name']}", d["spec"]["names"]["kind"])
        for d in corpus.corpus().values()
        for v in d["spec"]["versions"]
        if v.get("served", True)
        and (v.get("storage") or d["spec"].get("conversion", {}).get("strategy") != "Webhook")
    }
    assert wanted == {(s["apiVersion"], s["kind"]) for s in _samples()}


@pytest.mark.parametrize("sample", _samples(), ids=_sample_id)
def test_an_object_made_with_the_generated_model_reads_back_field_for_field(
    sample: dict[str, Any],
    installed: dict[tuple[str, str], type[CustomResource]],
    http: httpx.Client,
    namespace: str,
) -> None:
    cls = installed[(sample["apiVersion"], sample["kind"])]
    made = cls.model_validate(sample)
    if not cls.__kubectrl_kind__.namespaced:
        made.metadata.name = f"{made.metadata.name}-{namespace}"
    body = made.model_dump(by_alias=True, exclude_none=True, mode="json")
    # What the model sends says what the sample says (no name mangled, nothing dropped); it may
    # say more: the defaults the model fills in.
    missing = list(_missing(_comparable(sample), _comparable(body)))
    assert not missing, missing
    created = http.post(_collection(cls, namespace), json=body)
    assert created.status_code == 201, created.text
    try:
        read = http.get(f"{_collection(cls, namespace)}/{made.metadata.name}")
        assert read.status_code == 200, read.text
        back = cls.model_validate(read.json())
        sent = _comparable(body)
        got = _comparable(back.model_dump(by_alias=True, exclude_none=True, mode="json"))
        assert got == sent, "\n".join(corpus.differences(sent, got))
    finally:
        if not cls.__kubectrl_kind__.namespaced:
            http.delete(f"{_collection(cls, namespace)}/{made.metadata.name}")


def test_the_server_enforces_what_the_generated_models_say(
    installed: dict[tuple[str, str], type[CustomResource]], http: httpx.Client, namespace: str
) -> None:
    """A quantity takes quantities only, a pattern of an int-or-string is checked; a
    number-or-string keeps a number as a number."""
    alert = installed[("corpus.kubectrl.test/v1", "Alert")]
    quota = installed[("corpus.kubectrl.test/v1", "ResourceQuota")]
    for cls, name, spec, field in (
        (quota, "bad-quantity", {"storage": "lots"}, "spec.storage"),
        (quota, "bad-burst", {"burst": "half"}, "spec.burst"),
    ):
        body = {
            "apiVersion": cls.__kubectrl_kind__.api_version,
            "kind": cls.__kubectrl_kind__.kind,
            "metadata": {"name": name},
            "spec": spec,
        }
        response = http.post(_collection(cls, namespace), json=body)
        assert response.status_code == 422, (name, response.text)
        causes = [c.get("field") for c in response.json()["details"]["causes"]]
        assert field in causes, (name, response.json()["details"])
    ok = alert.model_validate({"metadata": {"name": "number"}, "spec": {"threshold": 0.75}})
    response = http.post(
        _collection(alert, namespace), json=ok.model_dump(by_alias=True, exclude_none=True)
    )
    assert response.status_code == 201, response.text
    assert response.json()["spec"]["threshold"] == 0.75


def test_from_cluster_reads_the_crd_through_the_kubeconfig(
    installed: dict[tuple[str, str], type[CustomResource]],
    kubeconfig: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("KUBECONFIG", os.fspath(kubeconfig))
    out = io.StringIO()
    with redirect_stdout(out):
        status = main(
            [
                "models",
                "--from-cluster",
                "widgetsets.corpus.kubectrl.test",
                "releases.corpus.kubectrl.test",
                "workflows.corpus.kubectrl.test",
                "trafficrules.corpus.kubectrl.test",
                "--out",
                str(tmp_path),
            ]
        )
    assert status == 0
    for name in (
        "widgetsets.corpus.kubectrl.test",
        "releases.corpus.kubectrl.test",
        # What the server stores keeps a required metadata (Argo Workflows' shape) and adds no
        # apiVersion, kind or metadata to a schema that leaves them out (Istio's): nor may the
        # models.
        "workflows.corpus.kubectrl.test",
        "trafficrules.corpus.kubectrl.test",
    ):
        definition = corpus.corpus()[name]
        # The server returns properties in its own (sorted) order, so the module is compared
        # by the CRD it generates, not by its text.
        module = corpus.load(tmp_path / f"{models.module_name(definition)}.py")
        expected = corpus.comparable(definition)
        actual = corpus.comparable(corpus.regenerated(definition, module))
        assert expected == actual, "\n".join(corpus.differences(expected, actual))


@pytest.mark.parametrize(
    "name", ["workflows.corpus.kubectrl.test", "trafficrules.corpus.kubectrl.test"]
)
def test_the_server_stores_the_top_level_of_a_schema_as_written(
    name: str, installed: dict[tuple[str, str], type[CustomResource]], http: httpx.Client
) -> None:
    """A required metadata (Argo Workflows' CRDs) stays required, and a schema without
    apiVersion, kind and metadata properties (Istio's) gets none: the server stores the schema
    as sent, so the models must give back exactly that (tests/unit/models/test_roundtrip.py).
    Upstream: apiextensions-apiserver's CRD strategy stores spec.versions[].schema unchanged
    (k8s.io/apiextensions-apiserver/pkg/registry/customresourcedefinition/strategy.go)."""
    read = http.get(f"/apis/apiextensions.k8s.io/v1/customresourcedefinitions/{name}")
    assert read.status_code == 200, read.text
    stored = corpus.comparable(read.json())
    expected = corpus.comparable(corpus.corpus()[name])
    assert stored == expected, "\n".join(corpus.differences(expected, stored))


def test_from_cluster_names_a_missing_crd(
    installed: dict[tuple[str, str], type[CustomResource]],
    kubeconfig: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    monkeypatch.setenv("KUBECONFIG", os.fspath(kubeconfig))
    assert main(["models", "--from-cluster", "nothings.example.com"]) == 2
    assert "no CustomResourceDefinition 'nothings.example.com'" in capsys.readouterr().err
