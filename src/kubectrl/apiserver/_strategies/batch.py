"""The strategies of the ``batch`` group (``pkg/registry/batch/<resource>/strategy.go``).

Jobs: their defaults (``pkg/apis/batch/v1/defaults.go`` ``SetDefaults_Job``), the selector and
pod labels generated on the Job's uid (``generateSelector``), ``ValidateJobUpdate``. CronJobs:
their defaults and their job template's pod metadata.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Mapping
from typing import Any

from kubectrl.apiserver._resources import versions
from kubectrl.apiserver._strategies.base import Cause, Strategy
from kubectrl.apiserver._strategies.podspec import pod_defaults
from kubectrl.apiserver._validation import kinds
from kubectrl.apiserver._validation.kinds import validate_kind
from kubectrl.apiserver._validation.objects import go_equal, immutable_selector, template_meta

__all__ = ["CronJobs", "Jobs"]

_JOB_UID = "batch.kubernetes.io/controller-uid"


def _spec(obj: Mapping[str, Any]) -> Mapping[str, Any]:
    raw = obj.get("spec")
    return raw if isinstance(raw, Mapping) else {}


def _job_labels(obj: dict[str, Any]) -> None:
    """A Job without labels gets its pod template's (SetDefaults_Job)."""
    meta = obj.get("metadata")
    template = (
        (obj.get("spec") or {}).get("template") if isinstance(obj.get("spec"), dict) else None
    )
    labels = (
        ((template or {}).get("metadata") or {}).get("labels")
        if isinstance(template, dict)
        else None
    )
    if isinstance(meta, dict) and not meta.get("labels") and isinstance(labels, dict) and labels:
        meta["labels"] = dict(labels)


class Jobs(Strategy):
    """Jobs: completions, parallelism and backoff; a selector and pod labels on the Job's uid
    unless ``manualSelector: true``; the template and completion mode immutable."""

    resource = ("batch", "jobs")
    status = True
    generation = True
    field_labels = frozenset({"status.successful"})
    update_metadata_passes = 2

    def default(self, obj: dict[str, Any]) -> None:
        spec = obj.get("spec")
        if isinstance(spec, dict):
            _job_spec_defaults(spec)
            template = spec.get("template")
            pod_defaults(template.get("spec") if isinstance(template, dict) else None)
        if (obj.get("metadata") or {}).get("uid"):
            _job_labels(obj)  # on create: after the selector's labels (prepare_for_create)

    def prepare_for_create(self, obj: dict[str, Any]) -> None:
        """A Job without ``manualSelector: true`` gets a selector on its uid and its pod
        template the labels the Job controller finds its pods by."""
        meta = obj.get("metadata") or {}
        if obj.get("spec") is None:
            obj["spec"] = {}  # a struct, not a pointer: a null spec is the zero one
        spec = obj.get("spec")
        if not isinstance(spec, dict):
            return
        if spec.get("manualSelector") is not True:
            uid, name = str(meta.get("uid", "")), str(meta.get("name", ""))
            if spec.get("template") is None:
                spec["template"] = {}  # a struct too
            template = spec.get("template")
            if isinstance(template, dict):
                template_meta_ = template.setdefault("metadata", {})
                if isinstance(template_meta_, dict):
                    labels = template_meta_.get("labels")
                    labels = dict(labels) if isinstance(labels, dict) else {}
                    labels.update(
                        {
                            _JOB_UID: uid,
                            "batch.kubernetes.io/job-name": name,
                            "controller-uid": uid,
                            "job-name": name,
                        }
                    )
                    template_meta_["labels"] = dict(sorted(labels.items()))
            selector = spec.get("selector")
            if selector is None:
                spec["selector"] = {"matchLabels": {_JOB_UID: uid}}
            elif isinstance(selector, dict):
                match = selector.get("matchLabels")
                match = dict(match) if isinstance(match, dict) else {}
                match[_JOB_UID] = uid
                selector["matchLabels"] = match
        _job_labels(obj)

    def validate(self, obj: Mapping[str, Any], old: Mapping[str, Any] | None) -> list[Cause]:
        spec = _spec(obj)
        causes = validate_kind(kinds.job, obj)
        if old is not None and versions.at_least("1.37"):
            # From 1.37 jobStrategy.ValidateUpdate is ValidateJobUpdate alone, no longer
            # ValidateJob first (pkg/registry/batch/job/strategy.go, v1.36.3 -> v1.37.2): the
            # generated selector and labels (validateGeneratedSelector) are checked on create.
            causes = [c for c in causes if not _generated_selector_cause(c)]
        causes.extend(template_meta(spec.get("template"), "spec.template"))
        if old is not None:
            causes.extend(immutable_selector(spec, old))
            causes.extend(_job_update(obj, old))
        return causes


def _generated_selector_cause(cause: Cause) -> bool:
    """A cause of ``validateGeneratedSelector`` (``pkg/apis/batch/validation``)."""
    _, field, message = cause
    return field.startswith("spec.template.metadata.labels[") or (
        field == "spec.selector" and message.endswith("`selector` not auto-generated")
    )


def _job_spec_defaults(spec: dict[str, Any]) -> None:
    # pkg/apis/batch/v1/defaults.go SetDefaults_Job.
    if spec.get("completions") is None and spec.get("parallelism") is None:
        spec["completions"] = 1
    spec.setdefault("parallelism", 1)
    if spec.get("backoffLimit") is None:
        spec["backoffLimit"] = 2147483647 if spec.get("backoffLimitPerIndex") is not None else 6
    spec.setdefault("completionMode", "NonIndexed")
    spec.setdefault("suspend", False)
    failure = spec.get("podFailurePolicy")
    if isinstance(failure, dict):
        for rule in failure.get("rules") or ():
            for pattern in (
                (rule or {}).get("onPodConditions") or () if isinstance(rule, dict) else ()
            ):
                if isinstance(pattern, dict):
                    pattern.setdefault("status", "True")
    spec.setdefault(
        "podReplacementPolicy", "Failed" if failure is not None else "TerminatingOrFailed"
    )
    spec.setdefault("manualSelector", False)


def _job_update(new: Mapping[str, Any], old: Mapping[str, Any]) -> list[Cause]:
    """``ValidateJobUpdate`` (``pkg/apis/batch/validation``): the spec is validated again
    (``ValidateJobSpecUpdate`` runs ``ValidateJobSpec``), and the template and completion mode are
    immutable (a suspended Job that never started excepted: its scheduling directives may
    change)."""
    causes = [
        c
        for c in validate_kind(kinds.job, new)
        if c[1].startswith("spec.") and not c[1].startswith("spec.template.metadata.labels[")
    ]
    spec, old_spec = _spec(new), _spec(old)
    old_template = old_spec.get("template")
    suspended = old_spec.get("suspend") is True
    if suspended and not _map(old.get("status")).get("startTime"):
        old_template = _scheduling_directives_from(spec.get("template"), old_template)
    for field in ("template", "completionMode"):
        was = old_template if field == "template" else old_spec.get(field)
        if not go_equal(spec.get(field), was):
            shown = json.dumps(spec.get(field), sort_keys=True)
            causes.append(
                (
                    "FieldValueInvalid",
                    f"spec.{field}",
                    f"Invalid value: {shown}: field is immutable",
                )
            )
    return causes


def _map(value: Any) -> Mapping[str, Any]:
    return value if isinstance(value, Mapping) else {}


def _scheduling_directives_from(template: Any, old: Any) -> Any:
    """The old template with the new one's scheduling directives: what may change in the
    template of a suspended Job that never started (``AllowMutableSchedulingDirectives``:
    ``validatePodTemplateUpdate``, pkg/apis/batch/validation/validation.go; the options from
    pkg/registry/batch/job/strategy.go ``getValidationOptionsFromJob``)."""
    new, was = _map(template), copy.deepcopy(dict(_map(old)))
    new_meta, new_spec = _map(new.get("metadata")), _map(new.get("spec"))
    meta = dict(_map(was.get("metadata")))
    for key in ("labels", "annotations"):
        meta.pop(key, None)
        if key in new_meta:
            meta[key] = new_meta[key]
    was["metadata"] = meta
    pod = dict(_map(was.get("spec")))
    for key in ("nodeSelector", "tolerations", "schedulingGates"):
        pod.pop(key, None)
        if key in new_spec:
            pod[key] = new_spec[key]
    affinity, old_affinity = new_spec.get("affinity"), pod.get("affinity")
    if affinity is None and isinstance(old_affinity, Mapping):
        rest = {k: v for k, v in old_affinity.items() if k != "nodeAffinity"}
        pod["affinity"] = rest or None
    elif isinstance(affinity, Mapping):
        kept = dict(old_affinity) if isinstance(old_affinity, Mapping) else {}
        kept.pop("nodeAffinity", None)
        if "nodeAffinity" in affinity:
            kept["nodeAffinity"] = affinity["nodeAffinity"]
        pod["affinity"] = kept
    was["spec"] = pod
    return was


class CronJobs(Strategy):
    """CronJobs: concurrency and history defaults, their job template's pod defaults and
    metadata."""

    resource = ("batch", "cronjobs")
    status = True
    generation = True
    short_names = ("cj",)
    update_metadata_passes = 1

    def default(self, obj: dict[str, Any]) -> None:
        spec = obj.get("spec")
        if isinstance(spec, dict):
            spec.setdefault("concurrencyPolicy", "Allow")
            spec.setdefault("suspend", False)
            spec.setdefault("successfulJobsHistoryLimit", 3)
            spec.setdefault("failedJobsHistoryLimit", 1)
            job = (spec.get("jobTemplate") or {}).get("spec")
            template = job.get("template") if isinstance(job, dict) else None
            pod_defaults(template.get("spec") if isinstance(template, dict) else None)

    def validate(self, obj: Mapping[str, Any], old: Mapping[str, Any] | None) -> list[Cause]:
        job = _spec(obj).get("jobTemplate")
        job_spec = (job if isinstance(job, Mapping) else {}).get("spec")
        template = (job_spec if isinstance(job_spec, Mapping) else {}).get("template")
        return [
            *validate_kind(kinds.cron_job, obj),
            *template_meta(template, "spec.jobTemplate.spec.template"),
        ]
