"""kopf's 10-builtins: handlers on a built-in kind. Every pod outside ``kube-*`` namespaces is
deleted 30 s after it is seen, unless it is deleted before."""

import asyncio

from kubectrl.operator import Operator

operator = Operator()
POD = ("v1", "Pod")
tasks: dict[str, dict[str, asyncio.Task[None]]] = {}  # {namespace: {name: task}}


@operator.on_resume(POD)
@operator.on_create(POD)
async def pod_in_sight(namespace, name, logger, **_):
    if not namespace.startswith("kube-"):
        task = asyncio.create_task(pod_killer(namespace, name, logger))
        tasks.setdefault(namespace, {})[name] = task


@operator.on_delete(POD)
async def pod_deleted(namespace, name, **_):
    if name in tasks.get(namespace, {}):
        tasks[namespace][name].cancel()  # it also removes itself from `tasks`


async def pod_killer(namespace, name, logger, timeout=30):
    try:
        logger.info(f"=== Pod killing happens in {timeout}s.")
        await operator.clock.sleep(timeout)  # the manager's clock: a FakeClock in tests
        logger.info("=== Pod killing happens NOW!")
        await operator.client.delete(POD, name, namespace=namespace)
    except asyncio.CancelledError:
        logger.info("=== Pod killing is cancelled!")
    finally:
        tasks.get(namespace, {}).pop(name, None)
