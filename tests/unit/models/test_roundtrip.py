"""Every corpus CRD: generate the module, import it, generate the CRD back, compare.

The comparison is modulo key order and descriptions (see ``corpus.comparable``).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from kubectrl import models

from . import corpus


@pytest.fixture(scope="module")
def generated(tmp_path_factory: pytest.TempPathFactory) -> Path:
    directory = tmp_path_factory.mktemp("generated")
    for definition in corpus.corpus().values():
        corpus.write(definition, directory)
    return directory


def test_the_corpus_has_at_least_fifteen_crds_of_its_own_and_a_very_large_one() -> None:
    own = [n for n in corpus.names() if n.endswith(".corpus.kubectrl.test")]
    assert len(own) >= 15, own
    massive = corpus.corpus()["massives.corpus.kubectrl.test"]
    schema = massive["spec"]["versions"][0]["schema"]["openAPIV3Schema"]
    assert _count(schema) >= 2000


def _count(schema: object) -> int:
    if not isinstance(schema, dict):
        return 0
    properties = schema.get("properties", {})
    return len(properties) + sum(_count(v) for v in properties.values())


@pytest.mark.parametrize("name", corpus.names())
def test_generate_import_and_generate_back_gives_the_same_crd(name: str, generated: Path) -> None:
    definition = corpus.corpus()[name]
    module = corpus.load(generated / f"{models.module_name(definition)}.py")
    classes = corpus.resources(module)
    assert [c.__kubectrl_resource__.version for c in classes] == [
        v["name"] for v in definition["spec"]["versions"]
    ]
    expected = corpus.comparable(definition)
    actual = corpus.comparable(corpus.regenerated(definition, module))
    assert expected == actual, "\n".join(corpus.differences(expected, actual))


@pytest.mark.parametrize("name", corpus.names())
def test_generation_is_deterministic(name: str, generated: Path) -> None:
    definition = corpus.corpus()[name]
    path = generated / f"{models.module_name(definition)}.py"
    assert models.from_crd(definition) == path.read_text(encoding="utf-8")
