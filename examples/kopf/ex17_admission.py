"""kopf's 17-admission: validating and mutating admission handlers, served by the manager's
webhook server. kopf picks the server in a startup hook (``kopf.WebhookServer``, K3d, Minikube,
ngrok tunnels) and manages the webhook configurations itself (``settings.admission.managed``);
here the server is the manager's (``ManagerOptions(webhook_server=WebhookServerOptions(port=,
cert_dir=))``) and the configurations are manifests
(``kubectrl.webhook.webhook_configurations(manager.webhook_server, service_name=...)``).
kopf's ``headers`` and ``sslpeer`` are not passed: the API server's ``userinfo`` says who asks."""

from kubectrl.operator import Operator
from kubectrl.webhook import Denied

operator = Operator()
KEX = ("kopf.dev/v1", "KopfExample")


@operator.on_validate(KEX)
def authhook(userinfo, warnings, **_):
    warnings.append(f"Accessing as user: {userinfo.get('username', '(unidentified)')}")


@operator.on_validate(KEX)
def validate1(spec, dryrun, **_):
    if not dryrun and spec.get("field") == "wrong":
        raise Denied("Meh! I don't like it. Change the field.")


@operator.on_validate(KEX, when=lambda spec, **_: spec.get("field") == "not-allowed")
def validate2(**_):
    raise Denied("I'm too lazy anyway. Go away!", code=555)


@operator.on_validate(KEX, subresource="*")
def validate_subresources(spec, subresource, status, warnings, **_):
    if subresource == "status" and status.get("field") != spec.get("field"):
        raise Denied("status.field MUST be equal to spec.field!")
    elif subresource is None and status.get("field") != spec.get("field"):
        warnings.append(
            "Also update status.field to match spec.field: "
            f"{spec.get('field')!r} != {status.get('field')!r}"
        )


@operator.on_mutate(KEX, labels={"somelabel": "somevalue"})
def mutate1(patch, **_):
    patch["spec"] = {"injected": 123}
