"""The strategies of RBAC (``pkg/registry/rbac/<resource>/strategy.go``).

Roles and ClusterRoles: their rules; RoleBindings and ClusterRoleBindings: the RBAC group
defaulted into ``roleRef`` and the User and Group subjects (``SetDefaults_RoleBinding``,
``SetDefaults_Subject``), a ``roleRef`` that cannot change (``ValidateRoleBindingUpdate``).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from kubectrl.apiserver._strategies.base import Cause, Strategy
from kubectrl.apiserver._validation import kinds
from kubectrl.apiserver._validation.kinds import validate_kind
from kubectrl.apiserver._validation.objects import go_equal

__all__ = ["ClusterRoleBindings", "ClusterRoles", "RoleBindings", "Roles"]

_RBAC = "rbac.authorization.k8s.io"


class Roles(Strategy):
    """Roles: namespaced rules."""

    resource = (_RBAC, "roles")
    update_metadata_passes = 2

    def validate(self, obj: Mapping[str, Any], old: Mapping[str, Any] | None) -> list[Cause]:
        return validate_kind(kinds.role, obj)


class ClusterRoles(Strategy):
    """ClusterRoles: rules, non-resource URLs among them (none with an aggregation rule)."""

    resource = (_RBAC, "clusterroles")

    def validate(self, obj: Mapping[str, Any], old: Mapping[str, Any] | None) -> list[Cause]:
        return validate_kind(kinds.cluster_role, obj)


class _Binding(Strategy):
    def check(self, obj: Mapping[str, Any]) -> list[Cause]:
        """The binding's fields."""
        return validate_kind(kinds.role_binding, obj)

    def default(self, obj: dict[str, Any]) -> None:
        role_ref = obj.get("roleRef")
        if role_ref is None:
            role_ref = obj["roleRef"] = {}  # a struct: null is the zero one
        if isinstance(role_ref, dict) and not role_ref.get("apiGroup"):
            role_ref["apiGroup"] = _RBAC  # SetDefaults_RoleBinding
        for subject in obj.get("subjects") or ():
            # SetDefaults_Subject: users and groups are RBAC's.
            if (
                isinstance(subject, dict)
                and not subject.get("apiGroup")
                and subject.get("kind") in ("User", "Group")
            ):
                subject["apiGroup"] = _RBAC

    def validate(self, obj: Mapping[str, Any], old: Mapping[str, Any] | None) -> list[Cause]:
        causes = self.check(obj)
        # ValidateRoleBindingUpdate: the role a binding grants cannot change
        if old is not None and not go_equal(obj.get("roleRef"), old.get("roleRef")):
            shown = json.dumps(obj.get("roleRef"), sort_keys=True)
            causes.append(
                ("FieldValueInvalid", "roleRef", f"Invalid value: {shown}: cannot change roleRef")
            )
        return causes


class RoleBindings(_Binding):
    """RoleBindings: a Role or ClusterRole granted in a namespace."""

    resource = (_RBAC, "rolebindings")
    update_metadata_passes = 2


class ClusterRoleBindings(_Binding):
    """ClusterRoleBindings: a ClusterRole granted everywhere (ServiceAccount subjects name
    their namespace)."""

    resource = (_RBAC, "clusterrolebindings")

    def check(self, obj: Mapping[str, Any]) -> list[Cause]:
        return validate_kind(kinds.cluster_role_binding, obj)
