"""The API core served in process, without a socket: a :class:`Request` in, a :class:`Reply`
(or a :class:`WatchStream`) out. :class:`kubectrl.testing.FakeAPI` is this core behind an
``httpx`` transport; :class:`~kubectrl.apiserver.APIServer` is the same core behind HTTPS.

Use it to put the core behind a transport of your own. A request is served in two steps, as
the apiserver does: :meth:`APICore.route` resolves the path to a :class:`Route` (resource,
version, namespace, name, verb: what a fault injector or an authorizer needs) or answers at
once (discovery, a 404), then :meth:`APICore.serve` runs it. A refusal on the way is a
:class:`StatusError` carrying the status code and the ``Status`` body the apiserver would send;
a behaviour the core does not implement raises :class:`FeatureNotImplementedError` naming it,
never a silent approximation.

A :class:`Reply`'s body is the answer to encode: it shares values with the stored objects
(copying each answer cost a sixth of the core's time), so encode it as it is, or
``copy.deepcopy`` it before changing it.

Example::

    >>> import json
    >>> from kubectrl._internal.clock import RealClock
    >>> from kubectrl.apiserver.inprocess import APICore, Reply, Request, StatusError
    >>> core = APICore(RealClock())
    >>> body = {"apiVersion": "v1", "kind": "ConfigMap",
    ...         "metadata": {"name": "a", "namespace": "default"}, "data": {"k": "v"}}
    >>> request = Request("POST", "/api/v1/namespaces/default/configmaps",
    ...                   body=json.dumps(body).encode())
    >>> route = core.route(request)
    >>> route.verb, route.info.plural
    ('create', 'configmaps')
    >>> try:
    ...     core.serve(route, request)
    ... except StatusError as err:
    ...     print(err.code, err.body["message"])
    404 namespaces "default" not found
    >>> namespace = {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "default"}}
    >>> create = Request("POST", "/api/v1/namespaces", body=json.dumps(namespace).encode())
    >>> core.serve(core.route(create), create).code
    201
    >>> reply = core.serve(route, request)
    >>> isinstance(reply, Reply), reply.code, reply.body["data"]
    (True, 201, {'k': 'v'})
"""

from __future__ import annotations

from kubectrl._internal.exports import publish as _publish
from kubectrl.apiserver._endpoints.core import APICore
from kubectrl.apiserver._endpoints.watch import WatchStream
from kubectrl.apiserver._resources.info import ResourceInfo
from kubectrl.apiserver._router import Reply, Request, Route, invalid_name
from kubectrl.apiserver._status import FeatureNotImplementedError, StatusError, status_body

__all__ = [
    "APICore",
    "FeatureNotImplementedError",
    "Reply",
    "Request",
    "ResourceInfo",
    "Route",
    "StatusError",
    "WatchStream",
    "invalid_name",
    "status_body",
]

_publish(__name__, globals(), __all__, private_of="kubectrl.apiserver")
