"""What the generator makes of single constructs, what it refuses, and the helpers around it."""

from __future__ import annotations

import io
from contextlib import redirect_stderr, redirect_stdout
from pathlib import Path
from typing import Any

import pytest
import yaml

from kubectrl import crd as crd_module
from kubectrl import models
from kubectrl.__main__ import main

from . import corpus


def _crd(spec_schema: dict[str, Any], **version: Any) -> dict[str, Any]:
    return {
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": "things.example.com"},
        "spec": {
            "group": "example.com",
            "scope": "Namespaced",
            "names": {"kind": "Thing", "plural": "things"},
            "versions": [
                {
                    "name": "v1",
                    "served": True,
                    "storage": True,
                    "schema": {
                        "openAPIV3Schema": {
                            "type": "object",
                            "properties": {"spec": spec_schema},
                        }
                    },
                    **version,
                }
            ],
        },
    }


def _module(definition: dict[str, Any], tmp_path: Path) -> Any:
    return corpus.load(corpus.write(definition, tmp_path))


def test_a_node_it_cannot_express_is_kept_as_any_json_with_a_comment_naming_it(
    tmp_path: Path,
) -> None:
    definition = _crd(
        {
            "type": "object",
            "properties": {
                "odd": {"type": "array", "items": {"type": "string"}, "uniqueItems": False},
                "fine": {"type": "string"},
            },
        }
    )
    text = models.from_crd(definition)
    assert "# spec.odd: uniqueItems have no model construct; kept as any JSON" in text
    module = _module(definition, tmp_path)
    spec = crd_module.schema(module.Thing)["properties"]["spec"]["properties"]
    assert spec["odd"] == {"x-kubernetes-preserve-unknown-fields": True}
    assert spec["fine"] == {"type": "string"}
    thing = module.Thing.model_validate({"spec": {"odd": ["a", "a"], "fine": "x"}})
    assert thing.model_dump(by_alias=True, exclude_none=True)["spec"]["odd"] == ["a", "a"]


def test_unknown_fields_survive_a_round_trip_as_with_hand_written_models(tmp_path: Path) -> None:
    definition = _crd(
        {"type": "object", "properties": {"size": {"type": "integer"}}},
    )
    module = _module(definition, tmp_path)
    body = {
        "apiVersion": "example.com/v1",
        "kind": "Thing",
        "metadata": {"name": "a", "somethingNew": {"x": 1}},
        "spec": {"size": 1, "addedLater": ["kept"]},
        "status": {"phase": "Ready"},
    }
    thing = module.Thing.model_validate(body)
    assert thing.model_dump(by_alias=True, exclude_none=True, mode="json") == body


def test_property_names_get_an_alias_exactly_when_the_automatic_one_differs() -> None:
    text = models.from_crd(
        _crd(
            {
                "type": "object",
                "properties": {
                    "deploymentName": {"type": "string"},
                    "isCA": {"type": "boolean"},
                    "hostIp": {"type": "string"},
                    "partial_response_strategy": {"type": "string"},
                },
            }
        )
    )
    assert "    deployment_name: str | None = None\n" in text
    assert 'is_ca: bool | None = Field(default=None, alias="isCA")' in text
    # hostIp is what camelCase gives, but host_ip has an initialism: the alias says it.
    assert 'host_ip: str | None = Field(default=None, alias="hostIp")' in text
    assert 'alias="partial_response_strategy"' in text


def test_a_tagged_union_schema_and_descriptions(tmp_path: Path) -> None:
    definition = corpus.corpus()["paymentmethods.corpus.kubectrl.test"]
    module = _module(definition, tmp_path)
    method = module.PaymentMethodSpecMethod
    assert method.__doc__ == "A tagged union; type says which variant."
    assert method.model_fields["type"].annotation.__args__ == ("Card", "Transfer", "Voucher")


def test_multi_version_crds_get_one_class_per_version(tmp_path: Path) -> None:
    module = _module(corpus.corpus()["releases.corpus.kubectrl.test"], tmp_path)
    v1alpha1, v1beta1, v1 = corpus.resources(module)
    assert (v1alpha1.__name__, v1beta1.__name__, v1.__name__) == (
        "ReleaseV1alpha1",
        "ReleaseV1beta1",
        "ReleaseV1",
    )
    assert v1alpha1.__kubectrl_resource__.served is False
    assert v1beta1.__kubectrl_resource__.deprecated is True
    assert v1.__kubectrl_resource__.storage is True
    assert "chart_name" in module.ReleaseV1beta1Spec.model_fields
    assert "chart" in module.ReleaseV1Spec.model_fields


def test_version_keeps_one_version() -> None:
    definition = corpus.corpus()["releases.corpus.kubectrl.test"]
    text = models.from_crd(definition, version="v1")
    assert "class Release(" in text
    assert "v1beta1" not in text
    with pytest.raises(
        models.ModelGenerationError, match=r"no version 'v2'.*v1alpha1, v1beta1, v1"
    ):
        models.from_crd(definition, version="v2")


@pytest.mark.parametrize(
    ("definition", "message"),
    [
        ({"kind": "ConfigMap"}, "expected a CustomResourceDefinition, got 'ConfigMap'"),
        ({"kind": "CustomResourceDefinition", "spec": {}}, "needs spec.group"),
        (
            {
                "kind": "CustomResourceDefinition",
                "spec": {"group": "g", "names": {"kind": "K", "plural": "ks"}, "versions": []},
            },
            "has no versions",
        ),
        (
            {
                "kind": "CustomResourceDefinition",
                "metadata": {"name": "ks.g"},
                "spec": {
                    "group": "g",
                    "names": {"kind": "K", "plural": "ks"},
                    "versions": [{"name": "v1"}],
                },
            },
            "ks.g: version 'v1' has no schema.openAPIV3Schema",
        ),
    ],
)
def test_what_is_not_a_crd_to_generate_from_is_refused_naming_it(
    definition: dict[str, Any], message: str
) -> None:
    with pytest.raises(models.ModelGenerationError, match=message):
        models.from_crd(definition)


def test_assert_up_to_date_passes_on_a_fresh_module_and_fails_with_a_diff(tmp_path: Path) -> None:
    definition = _crd({"type": "object", "properties": {"size": {"type": "integer"}}})
    crd_file = tmp_path / "things.yaml"
    crd_file.write_text(yaml.safe_dump(definition), encoding="utf-8")
    module = tmp_path / "things_example_com.py"
    module.write_text(models.from_crd(definition), encoding="utf-8")
    models.assert_up_to_date(module, crd_file)

    definition["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"]["spec"][
        "properties"
    ]["color"] = {"type": "string"}
    crd_file.write_text(yaml.safe_dump(definition), encoding="utf-8")
    with pytest.raises(AssertionError) as info:
        models.assert_up_to_date(module, crd_file)
    message = str(info.value)
    assert "out of date" in message
    assert "+    color: str | None = None" in message
    assert f"python -m kubectrl models --from-crd {crd_file} --out {tmp_path}" in message


def _run(*argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with redirect_stdout(out), redirect_stderr(err):
        status = main(list(argv))
    return status, out.getvalue(), err.getvalue()


def test_cli_prints_one_module_and_writes_one_per_crd_with_out(tmp_path: Path) -> None:
    certificates = str(corpus.THIRD_PARTY / "certificates.corpus.kubectrl.test.yaml")
    alerts = str(corpus.THIRD_PARTY / "alerts.corpus.kubectrl.test.yaml")
    status, out, _ = _run("models", "--from-crd", certificates)
    assert status == 0
    assert out == models.from_crd(models.load_crds(certificates)[0])

    status, out, _ = _run("models", "--from-crd", certificates, alerts, "--out", str(tmp_path))
    assert status == 0
    written = sorted(p.name for p in tmp_path.iterdir())
    assert written == ["alerts_corpus_kubectrl_test.py", "certificates_corpus_kubectrl_test.py"]
    assert out.splitlines() == [str(tmp_path / n) for n in reversed(written)]


def test_cli_errors_name_the_problem(tmp_path: Path) -> None:
    certificates = str(corpus.THIRD_PARTY / "certificates.corpus.kubectrl.test.yaml")
    status, _, err = _run("models", "--from-crd", certificates, certificates)
    assert status == 2
    assert "2 CRDs: give --out DIR" in err
    bad = tmp_path / "cm.yaml"
    bad.write_text("kind: ConfigMap\n", encoding="utf-8")
    status, _, err = _run("models", "--from-crd", str(bad))
    assert status == 2
    assert f"{bad}: document 1 is a ConfigMap, not a CustomResourceDefinition" in err
    status, _, err = _run("models", "--from-crd", certificates, "--version", "v9")
    assert status == 2
    assert "no version 'v9'" in err


def test_control_characters_in_a_description_are_written_as_escapes(tmp_path: Path) -> None:
    """A description is any JSON string; a NUL in a docstring made the module invalid Python
    (found by test_random_schemas_round_trip). Control characters are written as escapes, so
    the docstring holds the description's text as it was."""
    text = "a\x00b\x1bc\x7fd\x85e \\x00 f"
    definition = _crd(
        {
            "type": "object",
            "description": text,
            "properties": {"x": {"type": "string", "description": text}},
        }
    )
    source = models.from_crd(definition)
    assert "\x00" not in source
    assert "\x1b" not in source
    module = _module(definition, tmp_path)
    assert module.ThingSpec.__doc__ == text


def _top(schema: dict[str, Any]) -> dict[str, Any]:
    definition = _crd({"type": "object"})
    definition["spec"]["versions"][0]["schema"]["openAPIV3Schema"] = schema
    return definition


def test_the_top_level_keeps_which_of_apiversion_kind_metadata_it_declares_and_requires(
    tmp_path: Path,
) -> None:
    """Argo Workflows' CRDs require metadata; Istio's declare neither apiVersion, kind nor
    metadata; some declare only some. The generated model gives back exactly that (the real
    server stores it as written: tests/integration/models/test_generated_models_on_server.py)."""
    for declared in ((), ("metadata",), ("apiVersion", "kind")):
        for required in ((), ("metadata",), ("apiVersion", "kind", "metadata")):
            schema: dict[str, Any] = {
                "type": "object",
                "properties": {
                    **{
                        top: {"type": "object" if top == "metadata" else "string"}
                        for top in declared
                    },
                    "spec": {"type": "object", "x-kubernetes-preserve-unknown-fields": True},
                },
                "required": [*required, "spec"],
            }
            definition = _top(schema)
            module = _module(definition, tmp_path)
            again = corpus.regenerated(definition, module)
            assert corpus.comparable(again) == corpus.comparable(definition), (declared, required)
            (thing,) = corpus.resources(module)
            if "metadata" in required:
                with pytest.raises(ValueError, match="metadata"):
                    thing.model_validate({"spec": {}})
            made = thing.model_validate({"metadata": {"name": "a"}, "spec": {}})
            assert made.api_version == "example.com/v1"
            assert made.kind == "Thing"


def test_a_top_level_property_named_like_a_custom_resource_field_gets_another_name(
    tmp_path: Path,
) -> None:
    """A top-level ``Metadata`` (or ``Kind``) is a property of its own: its snake_case is
    CustomResource's ``metadata`` (``kind``) field, which it must not replace, also in a schema
    that does not declare ``metadata`` and ``kind`` (Istio's shape)."""
    schema = {
        "type": "object",
        "properties": {
            "Metadata": {"type": "integer"},
            "Kind": {"type": "string"},
        },
    }
    definition = _top(schema)
    module = _module(definition, tmp_path)
    assert corpus.comparable(corpus.regenerated(definition, module)) == corpus.comparable(
        definition
    )
    (thing,) = corpus.resources(module)
    made = thing.model_validate({"metadata": {"name": "a"}, "Metadata": 3, "Kind": "k"})
    body = made.model_dump(by_alias=True, exclude_none=True)
    assert body == {
        "apiVersion": "example.com/v1",
        "kind": "Thing",
        "metadata": {"name": "a"},
        "Metadata": 3,
        "Kind": "k",
    }


def test_a_top_level_apiversion_schema_the_model_cannot_keep_is_named_in_a_comment() -> None:
    schema = {
        "type": "object",
        "properties": {
            "apiVersion": {"type": "string", "enum": ["example.com/v1"]},
            "kind": {"type": "string"},
            "metadata": {"type": "object", "properties": {"name": {"type": "string"}}},
        },
    }
    text = models.from_crd(_top(schema))
    assert "# apiVersion: the CRD's schema for apiVersion is the server's own" in text
    assert "# metadata: the CRD's schema for metadata is the server's own" in text
