"""The strategies of the ``batch`` group (``pkg/registry/batch/<resource>/strategy.go``).

Jobs: their defaults (``pkg/apis/batch/v1/defaults.go`` ``SetDefaults_Job``), the selector and
pod labels generated on the Job's uid (``generateSelector``), ``ValidateJobUpdate``. CronJobs:
their defaults and their job template's pod metadata.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

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
        causes = [
            *validate_kind(kinds.job, obj),
            *template_meta(spec.get("template"), "spec.template"),
        ]
        if old is not None:
            causes.extend(immutable_selector(spec, old))
            causes.extend(_job_update(obj, old))
        return causes


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
    immutable (a suspended Job's scheduling directives excepted, not modelled here)."""
    causes = [
        c
        for c in validate_kind(kinds.job, new)
        if c[1].startswith("spec.") and not c[1].startswith("spec.template.metadata.labels[")
    ]
    spec, old_spec = _spec(new), _spec(old)
    for field in ("template", "completionMode"):
        if not go_equal(spec.get(field), old_spec.get(field)):
            shown = json.dumps(spec.get(field), sort_keys=True)
            causes.append(
                (
                    "FieldValueInvalid",
                    f"spec.{field}",
                    f"Invalid value: {shown}: field is immutable",
                )
            )
    return causes


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
