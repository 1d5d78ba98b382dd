"""The strategies of the ``apps`` group's workloads (``pkg/registry/apps/<resource>/strategy.go``).

Deployments, ReplicaSets, StatefulSets and DaemonSets: their defaults
(``pkg/apis/apps/v1/defaults.go``), a DaemonSet's template generation, a Deployment's
generation bumped by its annotations, and their validation (``pkg/apis/apps/validation``):
``spec.selector`` required (a DaemonSet's aside), matching the template's labels, immutable.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from kubectrl.apiserver._resources import versions
from kubectrl.apiserver._strategies.base import Cause, Strategy
from kubectrl.apiserver._strategies.podspec import pod_defaults
from kubectrl.apiserver._validation import kinds
from kubectrl.apiserver._validation.kinds import validate_kind
from kubectrl.apiserver._validation.objects import (
    go_equal,
    go_selector,
    immutable_selector,
    label_causes,
    quote,
    selector_matches,
    template_meta,
)

__all__ = ["DaemonSets", "Deployments", "ReplicaSets", "StatefulSets"]

_TEMPLATE_GENERATION = "deprecated.daemonset.template.generation"


def _spec(obj: Mapping[str, Any]) -> Mapping[str, Any]:
    raw = obj.get("spec")
    return raw if isinstance(raw, Mapping) else {}


class _Workload(Strategy):
    """A workload: replicas and a pod template selected by ``spec.selector``."""

    status = True
    generation = True
    update_metadata_passes = 1
    #: The kind's name in the empty-selector cause.
    singular = ""
    #: A missing selector is "Required value".
    selector_required = True
    #: What follows a selector that does not parse (``None``: no such cause).
    invalid_selector_detail: str | None = ": invalid label selector"
    #: How often the template's metadata is validated once the selector parsed.
    template_meta_passes = 1

    def default_spec(self, spec: dict[str, Any]) -> None:
        """The spec's own defaults."""

    def default(self, obj: dict[str, Any]) -> None:
        spec = obj.get("spec")
        if isinstance(spec, dict):
            self.default_spec(spec)
            template = spec.get("template")
            pod_defaults(template.get("spec") if isinstance(template, dict) else None)

    def validate(self, obj: Mapping[str, Any], old: Mapping[str, Any] | None) -> list[Cause]:
        spec = _spec(obj)
        causes = [*validate_kind(kinds.workload, obj), *self.selector_causes(spec)]
        if old is not None:
            causes.extend(immutable_selector(spec, old))
        return causes

    def selector_causes(self, spec: Mapping[str, Any]) -> list[Cause]:
        """The selector against the template's labels, as ``pkg/apis/apps/validation``: a
        missing selector is required and selects nothing, so the template's labels never match
        it; an empty one is invalid and selects everything (the match is then not checked); one
        that does not parse leaves the template unchecked."""
        causes: list[Cause] = []
        selector = spec.get("selector")
        template = spec.get("template")
        raw_labels = (
            (template if isinstance(template, Mapping) else {}).get("metadata") or {}
        ).get("labels")
        template_labels: Mapping[str, Any] = raw_labels if isinstance(raw_labels, Mapping) else {}
        if selector is None and self.selector_required:
            causes.append(("FieldValueRequired", "spec.selector", "Required value"))
        empty = isinstance(selector, Mapping) and not (
            selector.get("matchLabels") or selector.get("matchExpressions")
        )
        if empty:
            causes.append(
                (
                    "FieldValueInvalid",
                    "spec.selector",
                    f"Invalid value: {go_selector(selector)}: empty selector is invalid for "
                    f"{self.singular}",
                )
            )
        match_labels = selector.get("matchLabels") if isinstance(selector, Mapping) else None
        bad = label_causes(match_labels, "spec.selector.matchLabels")
        if bad:  # ValidateLabelSelector; LabelSelectorAsSelector fails: no template check
            causes.extend(bad)
            if self.invalid_selector_detail is not None:
                causes.append(
                    (
                        "FieldValueInvalid",
                        "spec.selector",
                        f"Invalid value: {go_selector(selector)}{self.invalid_selector_detail}",
                    )
                )
            return causes
        for _ in range(self.template_meta_passes):  # once the selector parsed
            causes.extend(template_meta(template, "spec.template"))
        if empty:  # selects everything: nothing to match
            return causes
        matches = selector is not None and selector_matches(
            selector if isinstance(selector, Mapping) else {}, template_labels
        )
        if not matches:
            shown = ", ".join(
                f"{quote(k)}:{quote(str(v))}" for k, v in sorted(template_labels.items())
            )
            value = (
                f"map[string]string{{{shown}}}"
                if raw_labels is not None
                else ("map[string]string(nil)")
            )
            causes.append(
                (
                    "FieldValueInvalid",
                    "spec.template.metadata.labels",
                    f"Invalid value: {value}: `selector` does not match template `labels`",
                )
            )
        return causes


class Deployments(_Workload):
    """Deployments: replicas, a rolling update of 25%, a generation bumped by annotation
    changes too (they are copied to the ReplicaSets)."""

    resource = ("apps", "deployments")
    scale = True
    short_names = ("deploy",)
    singular = "deployment"

    def default(self, obj: dict[str, Any]) -> None:
        spec = obj.setdefault("spec", {})
        spec.setdefault("replicas", 1)
        spec.setdefault("revisionHistoryLimit", 10)
        spec.setdefault("progressDeadlineSeconds", 600)
        strategy = spec.setdefault("strategy", {"type": "RollingUpdate"})
        if strategy.get("type", "RollingUpdate") == "RollingUpdate":
            strategy.setdefault("type", "RollingUpdate")
            strategy.setdefault("rollingUpdate", {}).setdefault("maxUnavailable", "25%")
            strategy["rollingUpdate"].setdefault("maxSurge", "25%")
        pod_defaults((spec.get("template") or {}).get("spec"))

    def prepare_for_update(self, new: dict[str, Any], old: Mapping[str, Any]) -> None:
        old_meta = old.get("metadata") or {}
        meta = new.setdefault("metadata", {})
        if (meta.get("annotations") or {}) != (old_meta.get("annotations") or {}):
            meta["generation"] = int(old_meta.get("generation") or 0) + 1


class ReplicaSets(_Workload):
    """ReplicaSets: replicas."""

    resource = ("apps", "replicasets")
    scale = True
    short_names = ("rs",)
    field_labels = frozenset({"status.replicas"})
    singular = "replicaset"

    def default_spec(self, spec: dict[str, Any]) -> None:
        spec.setdefault("replicas", 1)


_STATEFUL_SET_MUTABLE = (
    "replicas",
    "ordinals",
    "template",
    "updateStrategy",
    "revisionHistoryLimit",
    "persistentVolumeClaimRetentionPolicy",
    "minReadySeconds",
)


class StatefulSets(_Workload):
    """StatefulSets: ordered pod management, a rolling update from partition 0; only some
    fields of the spec may change (``ValidateStatefulSetUpdate``)."""

    resource = ("apps", "statefulsets")
    scale = True
    short_names = ("sts",)
    singular = "statefulset"
    invalid_selector_detail = ""
    # ValidatePodTemplateSpecForStatefulSet, then the spec's
    template_meta_passes = 2

    def default_spec(self, spec: dict[str, Any]) -> None:
        spec.setdefault("replicas", 1)
        spec.setdefault("podManagementPolicy", "OrderedReady")
        strategy = spec.setdefault("updateStrategy", {})
        if isinstance(strategy, dict):
            strategy.setdefault("type", "RollingUpdate")
            if strategy["type"] == "RollingUpdate":
                rolling = strategy.setdefault("rollingUpdate", {})
                if isinstance(rolling, dict):
                    rolling.setdefault("partition", 0)
                    if versions.at_least("1.37"):
                        # SetDefaults_StatefulSet (pkg/apis/apps/v1/defaults.go) defaults it
                        # under MaxUnavailableStatefulSet, beta and on by default from 1.37
                        # (pkg/features/kube_features.go, v1.37.2: {1.37, Default: true}).
                        rolling.setdefault("maxUnavailable", 1)
        spec.setdefault("revisionHistoryLimit", 10)
        policy = spec.setdefault("persistentVolumeClaimRetentionPolicy", {})
        if isinstance(policy, dict):
            policy.setdefault("whenDeleted", "Retain")
            policy.setdefault("whenScaled", "Retain")

    def prepare_for_create(self, obj: dict[str, Any]) -> None:
        _drop_max_unavailable(obj, None)

    def prepare_for_update(self, new: dict[str, Any], old: Mapping[str, Any]) -> None:
        _drop_max_unavailable(new, old)

    def validate(self, obj: Mapping[str, Any], old: Mapping[str, Any] | None) -> list[Cause]:
        spec = _spec(obj)
        causes = [*validate_kind(kinds.workload, obj), *self.selector_causes(spec)]
        if old is not None:  # the selector among the others: no immutable-selector cause
            causes.extend(_stateful_set_update(spec, old))
        return causes


def _rolling_update(obj: Mapping[str, Any] | None) -> Any:
    spec = (obj or {}).get("spec")
    strategy = spec.get("updateStrategy") if isinstance(spec, Mapping) else None
    return strategy.get("rollingUpdate") if isinstance(strategy, Mapping) else None


def _drop_max_unavailable(new: dict[str, Any], old: Mapping[str, Any] | None) -> None:
    """Before 1.37 ``MaxUnavailableStatefulSet`` is off by default (beta from 1.35, on from
    1.37: pkg/features/kube_features.go), so ``dropStatefulSetDisabledFields``
    (pkg/registry/apps/statefulset/strategy.go) drops ``rollingUpdate.maxUnavailable`` unless
    the stored object already uses it."""
    if versions.at_least("1.37"):
        return
    was = _rolling_update(old)
    if isinstance(was, Mapping) and was.get("maxUnavailable") is not None:
        return
    rolling = _rolling_update(new)
    if isinstance(rolling, dict):
        rolling.pop("maxUnavailable", None)


def _stateful_set_update(spec: Mapping[str, Any], old: Mapping[str, Any]) -> list[Cause]:
    old_spec = _spec(old)
    new_rest = {k: v for k, v in spec.items() if k not in _STATEFUL_SET_MUTABLE}
    old_rest = {k: v for k, v in old_spec.items() if k not in _STATEFUL_SET_MUTABLE}
    if go_equal(new_rest, old_rest):
        return []
    return [
        (
            "FieldValueForbidden",
            "spec",
            "Forbidden: updates to statefulset spec for fields other than 'replicas', "
            "'ordinals', 'template', 'updateStrategy', 'revisionHistoryLimit', "
            "'persistentVolumeClaimRetentionPolicy' and 'minReadySeconds' are forbidden",
        )
    ]


class DaemonSets(_Workload):
    """DaemonSets: a rolling update of one, the template generation annotation
    (``apps/v1`` writes the internal ``spec.templateGeneration`` as
    ``deprecated.daemonset.template.generation``, ``pkg/apis/apps/v1/conversion.go``), bumped
    when the pod template changes; the selector is not required and checked after the
    template's metadata."""

    resource = ("apps", "daemonsets")
    short_names = ("ds",)
    singular = "daemonset"
    selector_required = False
    invalid_selector_detail = None
    template_meta_passes = 0

    def default_spec(self, spec: dict[str, Any]) -> None:
        strategy = spec.setdefault("updateStrategy", {})
        if isinstance(strategy, dict):
            strategy.setdefault("type", "RollingUpdate")
            if strategy["type"] == "RollingUpdate":
                rolling = strategy.setdefault("rollingUpdate", {})
                if isinstance(rolling, dict):
                    rolling.setdefault("maxUnavailable", 1)
                    rolling.setdefault("maxSurge", 0)
        spec.setdefault("revisionHistoryLimit", 10)

    def prepare_for_create(self, obj: dict[str, Any]) -> None:
        if not isinstance(obj.get("spec"), dict):
            return
        annotations = obj.setdefault("metadata", {}).setdefault("annotations", {})
        if isinstance(annotations, dict):
            annotations[_TEMPLATE_GENERATION] = "1"

    def prepare_for_update(self, new: dict[str, Any], old: Mapping[str, Any]) -> None:
        """The template generation stays (the request's annotation is not read), bumped when
        the pod template changes."""
        old_meta = old.get("metadata") or {}
        try:
            generation = int(
                str((old_meta.get("annotations") or {}).get(_TEMPLATE_GENERATION, "0"))
            )
        except ValueError:
            generation = 0
        old_spec, new_spec = old.get("spec"), new.get("spec")
        old_template = old_spec.get("template") if isinstance(old_spec, Mapping) else None
        new_template = new_spec.get("template") if isinstance(new_spec, Mapping) else None
        if old_template != new_template:
            generation += 1
        meta = new.setdefault("metadata", {})
        annotations = meta.get("annotations")
        if not isinstance(annotations, dict):
            annotations = meta["annotations"] = {}
        annotations[_TEMPLATE_GENERATION] = str(generation)

    def validate(self, obj: Mapping[str, Any], old: Mapping[str, Any] | None) -> list[Cause]:
        spec = _spec(obj)
        causes = [
            *validate_kind(kinds.workload, obj),
            *template_meta(spec.get("template"), "spec.template"),
            *self.selector_causes(spec),
        ]
        if old is not None:
            causes.extend(immutable_selector(spec, old))
        return causes
