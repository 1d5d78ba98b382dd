"""The model generator under CRDs written to attack it: the module it writes never runs code the
CRD put there, attribute names are what Python reads them as, and hostile files are refused
with an error naming the file and the field instead of hanging or writing an invalid module."""

from __future__ import annotations

import ast
import inspect
import io
import itertools
import keyword
import subprocess
import sys
import types
import unicodedata
from contextlib import redirect_stderr, redirect_stdout
from pathlib import Path
from typing import Any

import pydantic
import pytest
import yaml

from kubectrl import models
from kubectrl.__main__ import main
from kubectrl.models import _files, _generate, _render

from . import corpus


def _crd(properties: dict[str, Any], **names: Any) -> dict[str, Any]:
    return {
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": "things.example.com"},
        "spec": {
            "group": names.pop("group", "example.com"),
            "scope": "Namespaced",
            "names": {"kind": "Thing", "plural": "things", **names},
            "versions": [
                {
                    "name": "v1",
                    "served": True,
                    "storage": True,
                    "schema": {
                        "openAPIV3Schema": {
                            "type": "object",
                            "properties": {"spec": {"type": "object", "properties": properties}},
                        }
                    },
                }
            ],
        },
    }


def _run(*argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with redirect_stdout(out), redirect_stderr(err):
        status = main(list(argv))
    return status, out.getvalue(), err.getvalue()


def _import_in_a_subprocess(path: Path, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", f"import runpy; runpy.run_path({str(path)!r})"],
        capture_output=True,
        text=True,
        check=False,
        cwd=cwd,
    )


def _field_names(module: types.ModuleType) -> dict[str, dict[str, str | None]]:
    return {
        name: {f: info.alias for f, info in cls.model_fields.items()}
        for name, cls in vars(module).items()
        if isinstance(cls, type)
        and issubclass(cls, pydantic.BaseModel)
        and cls.__module__ == module.__name__
    }


# --- 1. code in a property name -------------------------------------------------------------


def _injection(sentinel: Path) -> str:
    # A property the generator cannot express gets a comment naming it; the name's newline ended
    # the comment, and the next line (indented like the class body) ran on import.
    return f"x\n    import pathlib; pathlib.Path({str(sentinel)!r}).write_text('pwned')  #"


def test_a_newline_in_a_property_name_never_makes_code(tmp_path: Path) -> None:
    sentinel = tmp_path / "sentinel"
    wire = _injection(sentinel)
    definition = _crd(
        {wire: {"type": "array", "items": {"type": "string"}, "uniqueItems": True}},
    )
    text = models.from_crd(definition)
    tree = ast.parse(text)
    assert not [n for n in ast.walk(tree) if isinstance(n, ast.Import)]
    assert [n.module for n in ast.walk(tree) if isinstance(n, ast.ImportFrom)] == [
        "typing",
        "pydantic",
        "kubectrl.resources",
    ]
    # The comment is still there, on one line, the name escaped.
    assert "    # spec.x\\n    import pathlib;" in text
    path = corpus.write(definition, tmp_path)
    result = _import_in_a_subprocess(path, tmp_path)
    assert result.returncode == 0, result.stderr
    assert not sentinel.exists()
    module = corpus.load(path)
    (field,) = module.ThingSpec.model_fields.values()
    assert field.alias == wire


@pytest.mark.parametrize(
    "separator", ["\r", "\r\n", "\x0c", "\x0b", "\x1c", "\x85", "\u2028", "\u2029", "\x00"]
)
def test_no_line_break_or_control_character_leaves_a_comment(separator: str) -> None:
    wire = f"x{separator}import os{separator}"
    definition = _crd({wire: {"type": "array", "items": {"type": "string"}, "uniqueItems": True}})
    text = models.from_crd(definition)
    assert separator not in text
    comments = [line for line in text.splitlines() if line.lstrip().startswith("#")]
    assert len(comments) == 1
    assert comments[0].startswith("    # spec.x\\")


def test_the_module_check_refuses_code_the_generator_did_not_mean(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The escaping is what keeps code out; if it ever regressed, the check of the module with
    ``ast`` refuses it, naming the CRD and the field."""
    monkeypatch.setattr(_render, "comment", lambda text: text)
    wire = _injection(tmp_path / "sentinel")
    definition = _crd({wire: {"type": "array", "items": {"type": "string"}, "uniqueItems": True}})
    with pytest.raises(models.ModelGenerationError) as info:
        models.from_crd(definition)
    message = str(info.value)
    assert message.startswith(
        "things.example.com: refusing the generated module in class ThingSpec"
    )
    assert 'at the field for property "x\\n    import pathlib;' in message
    assert "an unexpected Import statement" in message
    assert "\n" not in message


def test_escaped_text_is_the_same_text() -> None:
    for text in ("a\nb", "\x00\x1b[31m", "\u202eevil", "\U000e0001", "back\\slash", "\xa0"):
        escaped = _render.comment(text)
        assert escaped.isprintable()
        assert ast.literal_eval(f'"{escaped}"') == text


# --- 2. names Python normalises ----------------------------------------------------------------


def test_a_fullwidth_name_does_not_replace_the_field_it_normalises_to(tmp_path: Path) -> None:
    fullwidth = "ｒｅｐｌｉｃａｓ"  # noqa: RUF001 - the point of the test
    assert unicodedata.normalize("NFKC", fullwidth) == "replicas"
    definition = _crd(
        {
            "replicas": {"type": "integer", "maximum": 5},
            fullwidth: {"type": "string"},
        }
    )
    module = corpus.load(corpus.write(definition, tmp_path))
    fields = module.ThingSpec.model_fields
    assert set(fields) == {"replicas", "replicas_"}
    assert fields["replicas"].annotation is not str
    assert fields["replicas_"].alias == fullwidth
    with pytest.raises(pydantic.ValidationError):
        module.ThingSpec.model_validate({"replicas": 9})
    body = {"replicas": 3, fullwidth: "three"}
    spec = module.ThingSpec.model_validate(body)
    assert (spec.replicas, spec.replicas_) == (3, "three")
    assert spec.model_dump(by_alias=True, exclude_none=True) == body


def test_a_mathematical_bold_model_config_is_a_field_not_the_config(tmp_path: Path) -> None:
    bold = "𝐦𝐨𝐝𝐞𝐥_𝐜𝐨𝐧𝐟𝐢𝐠"  # noqa: RUF001 - the point of the test
    assert unicodedata.normalize("NFKC", bold) == "model_config"
    definition = _crd({bold: {"type": "string", "enum": ["ignore"]}, "size": {"type": "integer"}})
    module = corpus.load(corpus.write(definition, tmp_path))
    assert module.ThingSpec.model_config == module.ResourceModel.model_config
    assert module.ThingSpec.model_fields["x_model_config"].alias == bold
    spec = module.ThingSpec.model_validate({bold: "ignore", "size": 1, "other": True})
    assert spec.model_dump(by_alias=True, exclude_none=True) == {
        bold: "ignore",
        "size": 1,
        "other": True,
    }


@pytest.mark.parametrize(
    "wire",
    [
        "½",
        "ℌ",  # noqa: RUF001 - the point of the test
        "ﬁeld",
        "𝐜𝐥𝐚𝐬𝐬",  # noqa: RUF001 - NFKC: class, a keyword
        "ｉｎｔ",  # noqa: RUF001 - NFKC: int, a type the module uses
        "ｃｏｐｙ",  # noqa: RUF001 - NFKC: copy, a BaseModel method
        "__class__",
        "_",
        "",
        "名前",
        "é",
    ],
)
def test_attribute_names_are_ascii_identifiers_python_reads_as_written(
    wire: str, tmp_path: Path
) -> None:
    definition = _crd({wire: {"type": "string"}, "plain": {"type": "string"}})
    module = corpus.load(corpus.write(definition, tmp_path))
    fields = module.ThingSpec.model_fields
    assert len(fields) == 2
    for name in fields:
        assert name.isascii()
        assert name.isidentifier()
        assert not keyword.iskeyword(name)
        assert unicodedata.normalize("NFKC", name) == name
        assert name not in dir(pydantic.BaseModel)
    assert {name if info.alias is None else info.alias for name, info in fields.items()} == {
        wire,
        "plain",
    }
    spec = module.ThingSpec.model_validate({wire: "x", "plain": "y"})
    assert spec.model_dump(by_alias=True, exclude_none=True) == {wire: "x", "plain": "y"}


# --- 3. hangs: names in linear time, YAML bounded --------------------------------------------


def test_colliding_property_names_are_named_in_linear_time(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """8,000 names that all make the attribute ``a`` took 148 s and a 32 MB module: each
    appended ``_`` until the name was free (n^2/2 checks, names n characters long); now 1.2 s.
    The checks are counted (each one asks ``keyword.iskeyword``), not timed."""
    checks = 0

    def iskeyword(name: str) -> bool:
        nonlocal checks
        checks += 1
        return keyword.iskeyword(name)

    monkeypatch.setattr(_generate, "keyword", types.SimpleNamespace(iskeyword=iskeyword))
    n = 2000
    # 2,000 short names that all make `a`: "a" and three punctuation characters.
    wires = ["a" + "".join(c) for c in itertools.product("-.$@!~+=,;:%^&*()[]{", repeat=3)][:n]
    text = models.from_crd(_crd({w: {"type": "string"} for w in wires}))
    assert checks <= 4 * n + 50, checks
    names = [
        stmt.target.id
        for stmt in ast.walk(ast.parse(text))
        if isinstance(stmt, ast.AnnAssign) and isinstance(stmt.target, ast.Name)
    ]
    assert len(set(names)) == len(names)
    assert max(len(name) for name in names) <= len(f"a_{n}")


class _CountingSet(set[str]):
    checks = 0

    def __contains__(self, item: object) -> bool:
        _CountingSet.checks += 1
        return super().__contains__(item)


def test_colliding_class_names_are_found_in_linear_time() -> None:
    module = _generate._Module()
    module.class_names = _CountingSet()
    names = [module.class_name("ThingSpecA") for _ in range(2000)]
    assert len(set(names)) == 2000
    assert _CountingSet.checks <= 3 * 2000, _CountingSet.checks


def _bomb(levels: int) -> str:
    """A CRD whose schema doubles at each level through aliases: 1.2 kB of YAML, 2^16 schema
    nodes at 16 levels (12 s and a 3.8 MB module before the loader counted them)."""
    lines = ["  l0: &l0 {type: string}"]
    lines += [
        f"  l{i}: &l{i} {{type: object, properties: {{a: *l{i - 1}, b: *l{i - 1}}}}}"
        for i in range(1, levels)
    ]
    return (
        "apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\n"
        "metadata: {name: things.example.com}\nx-definitions:\n" + "\n".join(lines) + "\n"
        "spec:\n  group: example.com\n  names: {kind: Thing, plural: things}\n"
        "  scope: Namespaced\n  versions:\n  - name: v1\n    served: true\n    storage: true\n"
        f"    schema: {{openAPIV3Schema: {{type: object, properties: {{spec: *l{levels - 1}}}}}}}\n"
    )


def test_a_yaml_bomb_is_refused_while_it_is_read(tmp_path: Path) -> None:
    path = tmp_path / "bomb.yaml"
    path.write_text(_bomb(16), encoding="utf-8")
    assert path.stat().st_size < 1300
    with pytest.raises(models.ModelGenerationError) as info:
        models.load_crds(path)
    message = str(info.value)
    assert message.startswith(f"{path}: cannot read a CRD: aliases expand the document to more")
    assert "than 16 times the" in message
    assert "(a YAML bomb?); refused" in message
    status, _, err = _run("models", "--from-crd", str(path))
    assert status == 2
    assert "aliases expand the document" in err


def test_aliases_that_share_a_schema_still_load(tmp_path: Path) -> None:
    path = tmp_path / "small.yaml"
    path.write_text(_bomb(6), encoding="utf-8")  # 2^6: what sharing schemas looks like
    (definition,) = models.load_crds(path)
    definition.pop("x-definitions")
    assert "class ThingSpecBABA(" in models.from_crd(definition)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("a: &a [*a]\n", "*a is inside &a (a cycle); refused"),
        ("a: &a {b: *a}\n", "*a is inside &a (a cycle); refused"),
        ("a: " + "[" * 5000 + "]" * 5000 + "\n", "nested deeper than 128 levels"),
    ],
)
def test_cycles_and_deep_nesting_in_yaml_are_refused(
    text: str, message: str, tmp_path: Path
) -> None:
    path = tmp_path / "hostile.yaml"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(models.ModelGenerationError) as info:
        models.load_crds(path)
    assert str(info.value).startswith(f"{path}: cannot read a CRD: ")
    assert message in str(info.value)


def test_a_document_with_too_many_values_is_refused_while_read(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(_files, "MAX_NODES", 1000)
    path = tmp_path / "big.yaml"
    path.write_text("kind: CustomResourceDefinition\nx: [" + "0, " * 1000 + "]\n")
    with pytest.raises(models.ModelGenerationError, match="more than 1000 values in one document"):
        models.load_crds(path)


def test_a_value_too_deep_or_cyclic_given_directly_is_refused() -> None:
    definition = _crd({"x": {"type": "string"}})
    spec = definition["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"]["spec"]
    spec["properties"]["loop"] = spec
    with pytest.raises(models.ModelGenerationError, match="nested deeper than 128 levels"):
        models.from_crd(definition)


@pytest.mark.parametrize(
    ("schema", "message"),
    [
        (
            {"type": "integer", "maximum": float("inf")},
            "properties.spec.properties.x.maximum: inf is not a JSON number",
        ),
        (
            {"type": "number", "default": float("nan")},
            "properties.spec.properties.x.default: nan is not a JSON number",
        ),
        (
            {"type": "string", "enum": [float("-inf")]},
            "x.enum[0]: -inf is not a JSON number",
        ),
        ({"type": "object", "properties": {1: {"type": "string"}}}, "key 1 is not a string"),
        ({"type": "string", "default": b"x"}, "bytes b'x' is not a JSON value"),
        ({"type": "string", "required": "abc"}, "spec.x: required must be a list of strings"),
        ({"type": "string", "enum": "abc"}, "spec.x: enum must be a list"),
        ({"type": ["string", "null"]}, "spec.x: type must be a string"),
        ({"type": "string", "maxLength": "5"}, "spec.x: maxLength must be an integer"),
        (
            {"type": "string", "x-kubernetes-validations": ["self.size() < 3"]},
            "spec.x: x-kubernetes-validations must be a list of {rule: string, ...}",
        ),
        ({"type": "object", "properties": ["a"]}, "spec.x: properties must be an object"),
    ],
)
def test_what_is_not_json_or_malformed_is_refused_naming_the_field(
    schema: dict[Any, Any], message: str
) -> None:
    with pytest.raises(models.ModelGenerationError) as info:
        models.from_crd(_crd({"x": schema}))
    assert str(info.value).startswith("things.example.com: ")
    assert message in str(info.value)


def test_nan_in_a_file_is_refused_naming_the_file_and_the_field(tmp_path: Path) -> None:
    path = tmp_path / "nan.yaml"
    text = yaml.safe_dump(_crd({"x": {"type": "number", "maximum": 1}}))
    path.write_text(text.replace("maximum: 1", "maximum: .nan"), encoding="utf-8")
    status, _, err = _run("models", "--from-crd", str(path))
    assert status == 2
    assert f"{path}: things.example.com: spec.versions[0].schema.openAPIV3Schema" in err
    assert "properties.x.maximum: nan is not a JSON number" in err


def test_a_yaml_date_is_refused_not_written_as_a_date(tmp_path: Path) -> None:
    path = tmp_path / "date.yaml"
    text = yaml.safe_dump(_crd({"x": {"type": "string", "default": "DATE"}}))
    path.write_text(text.replace("DATE", "2024-01-01"), encoding="utf-8")
    status, _, err = _run("models", "--from-crd", str(path))
    assert status == 2
    assert "default: date datetime.date(2024, 1, 1) is not a JSON value" in err


@pytest.mark.parametrize("kind", ["none", "true", "False", "½", "ｎｏｎｅ", "Any", "9lives"])  # noqa: RUF001
def test_any_kind_gives_a_module_that_imports(kind: str, tmp_path: Path) -> None:
    definition = _crd({"x": {"type": "string"}}, kind=kind)
    path = corpus.write(definition, tmp_path)
    module = corpus.load(path)
    (resource,) = corpus.resources(module)
    assert resource.__kubectrl_resource__.kind == kind
    assert resource.__name__.isascii()
    assert not keyword.iskeyword(resource.__name__)


def test_nul_and_control_characters_anywhere_give_a_module_that_imports(tmp_path: Path) -> None:
    text = 'a\x00b\x1b[2Jc\u202ed\r\ne"""f\\'
    definition = _crd(
        {
            text: {
                "type": "string",
                "description": text,
                "default": text,
                "pattern": "^a\x00\u202e$",
            }
        },
        group=f"g{text}.example.com",
    )
    definition["metadata"]["name"] = f"things.{text}"
    definition["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["description"] = text
    source = models.from_crd(definition)
    assert source.isprintable() or set(source) - set(source.replace("\n", "")) == {"\n"}
    assert "\x00" not in source
    assert "\u202e" not in source
    module = corpus.load(corpus.write(definition, tmp_path))
    (field,) = module.ThingSpec.model_fields.values()
    assert field.alias == text
    assert field.default == text
    # A docstring keeps the text, its line ends normalised as docstrings are.
    assert inspect.cleandoc(module.Thing.__doc__) == text.replace("\r\n", "\n")
    assert models.module_name(definition).isidentifier()
    assert models.module_name(definition).isascii()


def test_an_error_message_never_carries_raw_control_characters() -> None:
    definition = _crd({"x\n\x1b[2J": {"type": "string", "maxLength": "5"}})
    with pytest.raises(models.ModelGenerationError) as info:
        models.from_crd(definition)
    assert str(info.value).isprintable()
    assert "spec.x\\n\\x1b[2J: maxLength must be an integer" in str(info.value)


# --- --out never overwrites what the generator did not write --------------------------------


def test_out_refuses_to_overwrite_a_hand_written_file_unless_forced(tmp_path: Path) -> None:
    # plural "_" and group "init__" make the module name __init__.
    definition = _crd({"x": {"type": "string"}}, plural="_", group="init__")
    assert models.module_name(definition) == "__init__"
    crd_file = tmp_path / "crd.yaml"
    crd_file.write_text(yaml.safe_dump(definition), encoding="utf-8")
    out = tmp_path / "pkg"
    out.mkdir()
    mine = out / "__init__.py"
    mine.write_text('"""My package."""\n\nVERSION = 1\n', encoding="utf-8")
    status, _, err = _run("models", "--from-crd", str(crd_file), "--out", str(out))
    assert status == 2
    assert f"{mine} exists and was not written by `python -m kubectrl models`" in err
    assert "--force overwrites" in err
    assert mine.read_text(encoding="utf-8") == '"""My package."""\n\nVERSION = 1\n'

    status, _, _ = _run("models", "--from-crd", str(crd_file), "--out", str(out), "--force")
    assert status == 0
    assert _generate.written_by_generator(mine)
    # What the generator wrote, it overwrites without --force.
    status, _, _ = _run("models", "--from-crd", str(crd_file), "--out", str(out))
    assert status == 0


def test_out_refuses_two_crds_with_one_module_name(tmp_path: Path) -> None:
    one = _crd({"x": {"type": "string"}}, plural="a-b")
    two = _crd({"x": {"type": "string"}}, plural="a.b")
    crd_file = tmp_path / "crds.yaml"
    crd_file.write_text(yaml.safe_dump_all([one, two]), encoding="utf-8")
    status, _, err = _run("models", "--from-crd", str(crd_file), "--out", str(tmp_path / "out"))
    assert status == 2
    assert "two CRDs would both be written to" in err
    assert not (tmp_path / "out").exists()


def test_an_empty_property_name_round_trips_through_crd_generate(tmp_path: Path) -> None:
    """kubectrl.crd read the alias "" as no alias: the CRD generated from the models named the
    property ``field``."""
    definition = _crd({"": {"type": "string"}})
    module = corpus.load(corpus.write(definition, tmp_path))
    assert module.ThingSpec.model_fields["field"].alias == ""
    expected = corpus.comparable(definition)
    actual = corpus.comparable(corpus.regenerated(definition, module))
    assert expected == actual, "\n".join(corpus.differences(expected, actual))
