"""kopf's 16-indexing: indexes of pods, passed by name to probes and to a timer that writes
the running pods into each KopfExample's status. Needs the daemons part (``operator.timer``)
and indexes passed to timers."""

import pprint

from kubectrl.operator import Operator

operator = Operator()


@operator.index(("v1", "Pod"))
def is_running(namespace, name, status, **_):
    return {(namespace, name): status.get("phase") == "Running"}
    # {('kube-system', 'traefik-...-...'): (True,), ('default', 'web-0'): (False,), ...}


@operator.index(("v1", "Pod"))
def by_label(labels, name, **_):
    return {(label, value): name for label, value in labels.items()}
    # {('app', 'traefik'): ('traefik-...-...',), ...}


@operator.on_probe()
def pod_count(is_running, **_):
    return len(is_running)


@operator.on_probe()
def pod_names(is_running, **_):
    return [name for _, name in is_running]


@operator.timer(("kopf.dev/v1", "KopfExample"), interval=5)
def intervalled(is_running, by_label, patch, logger, **_):
    logger.info(pprint.pformat(dict(by_label)))
    patch["status"] = {
        "running-pods": [
            f"{ns}::{name}"
            for (ns, name), running in is_running.items()
            if ns in ["kube-system", "default"]
            if any(running)
        ]
    }
