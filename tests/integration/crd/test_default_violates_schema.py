"""A CRD whose default breaks its own schema is refused at install, by both servers.

apiextensions-apiserver validates every ``default`` of a structural schema against the schema it
sits in (k8s.io/apiextensions-apiserver pkg/apiserver/schema/defaulting/validation.go
``validate``, called from pkg/apis/apiextensions/validation/validation.go
``validateCustomResourceDefinitionSpec``): ``default: 0`` under ``minimum: 1`` is a 422 Invalid
naming ``...properties[size].default``. FakeAPI refuses it too, and its error names
``install_crd`` (the call the user made) and the field. :func:`kubectrl.crd.generate` refuses such
a model before any server sees it (tests/unit/crd/test_default_constraints.py).
"""

from __future__ import annotations

import copy
from typing import Any

import pytest

from kubectrl.envtest import ControlPlane
from kubectrl.testing import FakeAPI

pytestmark = pytest.mark.integration

GROUP = "defaults.kubectrl.example.com"

CRD: dict[str, Any] = {
    "apiVersion": "apiextensions.k8s.io/v1",
    "kind": "CustomResourceDefinition",
    "metadata": {"name": f"widgets.{GROUP}"},
    "spec": {
        "group": GROUP,
        "scope": "Namespaced",
        "names": {
            "kind": "Widget",
            "plural": "widgets",
            "singular": "widget",
            "listKind": "WidgetList",
        },
        "versions": [
            {
                "name": "v1",
                "served": True,
                "storage": True,
                "schema": {
                    "openAPIV3Schema": {
                        "type": "object",
                        "properties": {
                            "spec": {
                                "type": "object",
                                "properties": {
                                    "size": {"type": "integer", "minimum": 1, "default": 0}
                                },
                            }
                        },
                    }
                },
            }
        ],
    },
}


def test_the_apiserver_refuses_a_default_below_the_minimum(control_plane: ControlPlane) -> None:
    with control_plane.http_client() as http:
        response = http.post(
            "/apis/apiextensions.k8s.io/v1/customresourcedefinitions", json=copy.deepcopy(CRD)
        )
    assert response.status_code == 422, response.text
    message = response.json()["message"]
    assert "properties[spec].properties[size].default" in message, message
    assert "greater than or equal to 1" in message, message


def test_fakeapi_refuses_it_naming_install_crd_and_the_field() -> None:
    with pytest.raises(ValueError, match=r"^install_crd: ") as caught:
        FakeAPI().install_crd(copy.deepcopy(CRD))
    message = str(caught.value)
    assert message.startswith("install_crd: "), message
    assert not message.startswith("seed"), message
    assert "properties[spec].properties[size].default" in message, message
    assert "greater than or equal to 1" in message, message
