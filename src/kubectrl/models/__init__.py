"""Typed access to custom resources you did not write: pydantic models from a CRD.

:func:`from_crd` turns an ``apiextensions.k8s.io/v1`` CustomResourceDefinition into the source of
a Python module: one :class:`~kubectrl.resources.CustomResource` subclass per version and a
:class:`~kubectrl.resources.ResourceModel` per object of its schema, with the CRD's constraints
as the markers :mod:`kubectrl.crd` understands, so :func:`kubectrl.crd.generate` of the models
gives back the CRD's schema. ``python -m kubectrl models --from-crd FILE`` (or
``--from-cluster NAME``) is the command line; :func:`assert_up_to_date` is the test that a
committed module still matches its CRD file.

Example::

    >>> source = from_crd({
    ...     "apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
    ...     "metadata": {"name": "gizmos.example.com"},
    ...     "spec": {"group": "example.com", "scope": "Namespaced",
    ...              "names": {"kind": "Gizmo", "plural": "gizmos"},
    ...              "versions": [{"name": "v1", "served": True, "storage": True,
    ...                            "schema": {"openAPIV3Schema": {"type": "object", "properties": {
    ...                                "spec": {"type": "object", "properties": {
    ...                                    "size": {"type": "integer", "minimum": 1}}}}}}}]}})
    >>> print(source[source.index("class GizmoSpec"):], end="")
    class GizmoSpec(ResourceModel):
        size: Annotated[int, Field(ge=1)] | None = None
    <BLANKLINE>
    <BLANKLINE>
    class Gizmo(
        CustomResource,
        group="example.com",
        version="v1",
        kind="Gizmo",
        plural="gizmos",
        status_subresource=False,
        storage=True,
        meta_properties=(),
    ):
        spec: GizmoSpec | None = None
"""

from __future__ import annotations

from kubectrl._internal.exports import publish as _publish
from kubectrl.models._files import assert_up_to_date, load_crds, write_modules
from kubectrl.models._generate import ModelGenerationError, from_crd, module_name

__all__ = [
    "ModelGenerationError",
    "assert_up_to_date",
    "from_crd",
    "load_crds",
    "module_name",
    "write_modules",
]

_publish(__name__, globals(), __all__)
