"""kubectrl.rbac: declarations on classes, merged and sorted as controller-gen does.

The merge and sort pinned here follow controller-tools ``pkg/rbac/parser.go``
(``GenerateRoles``: one rule per resource, a Role per namespace sorted by namespace;
``NormalizeRules``: same target -> verbs united, then same verbs -> resources united, then
groups, then non-resource URLs; "core" means ""; a rule with "*" keeps only "*"; rules sorted by
the key "groups + resources + resourceNames + urls").
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
import yaml
from kubernetes.client.models import V1ConfigMap, V1Deployment

from kubectrl import CustomResource, rbac
from kubectrl.__main__ import main


class Widget(CustomResource, group="example.com", version="v1", kind="Widget"):
    pass


def test_kinds_resolve_to_group_and_plural_and_subresources_append() -> None:
    @rbac.rule(Widget, verbs=["get"])
    @rbac.rule(Widget, subresources=["status", "scale"], verbs=["update"])
    @rbac.rule(V1Deployment, ("v1", "ConfigMap"), verbs=["list"])
    class R:
        pass

    got = [(r.groups, r.resources, r.verbs) for r in rbac.rules_of(R)]
    assert got == [
        (("example.com",), ("widgets",), ("get",)),
        (("example.com",), ("widgets/status", "widgets/scale"), ("update",)),
        (("apps",), ("deployments",), ("list",)),
        (("",), ("configmaps",), ("list",)),
    ]


def test_same_target_unites_verbs_and_same_verbs_unite_resources_then_groups() -> None:
    # apps/replicasets and apps/daemonsets (same verbs) merge first, so batch/replicasets no
    # longer has the same resources to merge its group with: as controller-gen's order does.
    rules = [
        rbac.PolicyRule(verbs=("watch", "get"), groups=("apps",), resources=("deployments",)),
        rbac.PolicyRule(verbs=("list", "get"), groups=("apps",), resources=("deployments",)),
        rbac.PolicyRule(verbs=("get",), groups=("apps",), resources=("replicasets", "daemonsets")),
        rbac.PolicyRule(verbs=("get",), groups=("batch",), resources=("replicasets",)),
        rbac.PolicyRule(verbs=("create",), groups=("core",), resources=("events",)),
        rbac.PolicyRule(verbs=("patch",), groups=("",), resources=("events",)),
    ]
    assert rbac.normalize(rules) == [
        {"apiGroups": [""], "resources": ["events"], "verbs": ["create", "patch"]},
        {"apiGroups": ["apps"], "resources": ["daemonsets", "replicasets"], "verbs": ["get"]},
        {"apiGroups": ["apps"], "resources": ["deployments"], "verbs": ["get", "list", "watch"]},
        {"apiGroups": ["batch"], "resources": ["replicasets"], "verbs": ["get"]},
    ]
    same_resources = [
        rbac.PolicyRule(verbs=("get",), groups=("batch",), resources=("jobs",)),
        rbac.PolicyRule(verbs=("get",), groups=("example.com",), resources=("jobs",)),
    ]
    assert rbac.normalize(same_resources) == [
        {"apiGroups": ["batch", "example.com"], "resources": ["jobs"], "verbs": ["get"]},
    ]


def test_same_verbs_across_resources_of_one_group_become_one_rule() -> None:
    rules = [
        rbac.PolicyRule(verbs=("get", "list"), groups=("apps",), resources=("deployments",)),
        rbac.PolicyRule(verbs=("list", "get"), groups=("apps",), resources=("statefulsets",)),
    ]
    assert rbac.normalize(rules) == [
        {
            "apiGroups": ["apps"],
            "resources": ["deployments", "statefulsets"],
            "verbs": ["get", "list"],
        }
    ]


def test_star_verb_wins_and_urls_merge() -> None:
    rules = [
        rbac.PolicyRule(verbs=("get", "*"), groups=("apps",), resources=("deployments",)),
        rbac.PolicyRule(verbs=("get",), urls=("/metrics",)),
        rbac.PolicyRule(verbs=("get",), urls=("/healthz",)),
    ]
    assert rbac.normalize(rules) == [
        {"nonResourceURLs": ["/healthz", "/metrics"], "verbs": ["get"]},
        {"apiGroups": ["apps"], "resources": ["deployments"], "verbs": ["*"]},
    ]


def test_namespaced_rules_go_to_roles_sorted_by_namespace() -> None:
    @rbac.rule(V1ConfigMap, verbs=["get"], namespace="zz")
    @rbac.rule(V1ConfigMap, verbs=["get"], namespace="aa")
    @rbac.rule(V1Deployment, verbs=["get"])
    class R:
        pass

    objects = rbac.roles("ctl", R)
    assert [(o["kind"], o["metadata"].get("namespace")) for o in objects] == [
        ("ClusterRole", None),
        ("Role", "aa"),
        ("Role", "zz"),
    ]
    assert rbac.cluster_role("ctl", R)["rules"] == [
        {"apiGroups": ["apps"], "resources": ["deployments"], "verbs": ["get"]}
    ]


def test_subclasses_inherit_and_stacking_does_not_leak_into_the_base() -> None:
    @rbac.rule(V1Deployment, verbs=["get"])
    class Base:
        pass

    @rbac.rule(V1ConfigMap, verbs=["list"])
    class Child(Base):
        pass

    assert [r.resources for r in rbac.rules_of(Child)] == [("configmaps",), ("deployments",)]
    assert [r.resources for r in rbac.rules_of(Base)] == [("deployments",)]


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda: rbac.rule(verbs=[], groups=["apps"], resources=["deployments"]), "no verbs"),
        (lambda: rbac.rule(verbs="get", groups=["a"], resources=["b"]), "not a string"),
        (lambda: rbac.rule(("v1", "Nope"), verbs=["get"]), "('v1', 'Nope'): not a built-in"),
        (lambda: rbac.rule(int, verbs=["get"]), "'int' does not name"),
        (lambda: rbac.rule(resources=["x"], verbs=["get"]), "need their API groups"),
        (lambda: rbac.rule(urls=["/m"], verbs=["get"], namespace="n"), "namespace 'n'"),
    ],
)
def test_bad_declarations_fail_at_declaration_naming_the_fault(
    call: Callable[[], object], message: str
) -> None:
    with pytest.raises((TypeError, ValueError)) as info:
        call()
    assert message in str(info.value)


def test_a_source_without_declarations_is_an_error_naming_it() -> None:
    class Forgot:
        pass

    with pytest.raises(ValueError, match=r"Forgot.*declares no RBAC rules"):
        rbac.cluster_role("x", Forgot)


def test_cli_prints_roles_writes_out_and_names_a_bad_source(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["rbac", "kubectrl.rbac:EVENT_RULES", "--name", "events"]) == 0
    (role,) = yaml.safe_load_all(capsys.readouterr().out)
    assert role["metadata"] == {"name": "events"}
    assert role["rules"] == [rbac.normalize(rbac.EVENT_RULES)[0]]

    out = tmp_path / "config" / "role.yaml"
    assert main(["rbac", "kubectrl.rbac:METRICS_AUTH_RULES", "--name", "m", "--out", str(out)]) == 0
    assert yaml.safe_load(out.read_text())["kind"] == "ClusterRole"

    assert main(["rbac", "builtins:int", "--name", "x"]) == 2
    err = capsys.readouterr().err
    assert err == (
        "python -m kubectrl rbac: error: <class 'int'> declares no RBAC rules "
        "(decorate it with kubectrl.rbac.rule)\n"
    )
    assert main(["rbac", "kubectrl.rbac:NOPE", "--name", "x"]) == 2
    assert "'kubectrl.rbac' has no attribute 'NOPE'" in capsys.readouterr().err


def test_event_rules_grant_both_event_apis() -> None:
    """controller-runtime 0.23's recorder writes events.k8s.io/v1 Events (pkg/internal/recorder,
    client-go tools/events), its deprecated one core v1 Events: a controller needs create and
    patch on ``events`` in both groups (kubebuilder's scaffold marker
    ``groups=events.k8s.io,resources=events,verbs=create;patch``)."""
    (rule,) = rbac.normalize(rbac.EVENT_RULES)
    assert rule == {
        "apiGroups": ["", "events.k8s.io"],
        "resources": ["events"],
        "verbs": ["create", "patch"],
    }
