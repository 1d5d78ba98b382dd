"""kopf's 99-all-at-once: startup and cleanup hooks (one retried), create handlers that post
Events and retry after a failure, update and field handlers, a delete handler, a child Pod
adopted and labelled, and raw events of that Pod."""

import asyncio
import pprint
import time

from kubectrl.operator import Operator, TemporaryError, adopt

operator = Operator()
KEX = ("kopf.dev/v1", "KopfExample")


@operator.on_startup()
async def startup_fn_simple(logger, **_):
    logger.info("Starting in 1s...")
    await operator.clock.sleep(1)


@operator.on_startup()
async def startup_fn_retried(retry, logger, **_):
    if retry < 3:
        raise TemporaryError(f"Going to succeed in {3 - retry}s", delay=1)
    else:
        logger.info("Starting retried...")


@operator.on_cleanup()
async def cleanup_fn(logger, **_):
    logger.info("Cleaning up in 3s...")
    await asyncio.sleep(0)  # kopf sleeps 3 s here; a cleanup may take its time


@operator.on_create(KEX)
def create_1(body, **_):
    children = _create_children(owner=body)

    operator.info(body, reason="AnyReason")
    operator.event(body, type="Warning", reason="SomeReason", message="Cannot do something")
    for child in children:
        operator.event(
            child, type="Normal", reason="SomeReason", message="Created as part of the job1step"
        )

    return {"job1-status": 100}


@operator.on_create(KEX)
def create_2(retry, **_):
    wait_for_something()  # specific for job2, e.g. an external API poller

    if not retry:
        # will be retried by the framework, even if it has been restarted
        raise Exception("Whoops!")

    return {"job2-status": 100}


@operator.on_update(KEX)
def update(diff, logger, **_):
    logger.info("Handling the diff")
    logger.info(pprint.pformat(list(diff)))


@operator.on_field(KEX, field="spec.lst")
def update_lst(old, new, logger, **_):
    logger.info(f"Handling the FIELD = {old} -> {new}")


@operator.on_delete(KEX)
def delete(**_):
    pass


def _create_children(owner):
    return []


def wait_for_something():
    # Note: intentionally blocking from the asyncio point of view.
    time.sleep(0.01)


@operator.on_create(KEX)
async def create_pod(body, **_):
    # A child Pod: namespace, name prefix, owner reference and the owner's labels from `adopt`.
    pod = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"labels": {"application": "kopf-example-10"}},
    }
    pod["spec"] = {
        "containers": [
            {"name": "the-only-one", "image": "busybox", "command": ["sh", "-x", "-c", "sleep 1"]}
        ]
    }
    await operator.client.create(adopt(pod, body))


@operator.on_event(("v1", "Pod"), labels={"application": "kopf-example-10"})
def example_pod_change(logger, **_):
    logger.info("This pod is special for us.")
