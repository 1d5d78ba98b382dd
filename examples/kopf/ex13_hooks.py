"""kopf's 13-hooks: startup hooks (one retried), a cleanup hook, probes, and a background task
per pod seen in raw events. kopf's login hook has no counterpart here: the manager connects
with the kubeconfig or the in-cluster config (a ``ClientConfig``, refreshed as client-go does)."""

import asyncio
import random

from kubectrl.operator import Operator, TemporaryError

operator = Operator()
LOCK: asyncio.Lock  # needs the running loop: made on startup
STOPPERS: dict[str, dict[str, asyncio.Event]] = {}  # [namespace][name]
TASKS: set[asyncio.Task[None]] = set()


@operator.on_startup()
async def startup_fn_simple(logger, **_):
    logger.info("Initialising the task-lock...")
    global LOCK
    LOCK = asyncio.Lock()  # in the current asyncio loop


@operator.on_startup()
async def startup_fn_retried(retry, logger, **_):
    if retry < 3:
        raise TemporaryError(f"Going to succeed in {3 - retry}s", delay=1)
    logger.info("Starting retried...")


@operator.on_cleanup()
async def cleanup_fn(logger, **_):
    logger.info("Cleaning up...")
    for flags in STOPPERS.values():
        for flag in flags.values():
            flag.set()
    logger.info("All pod-tasks are requested to stop...")


@operator.on_probe()
async def tasks_count(**_):
    return sum(len(flags) for flags in STOPPERS.values())


@operator.on_probe()
async def monitored_objects(**_):
    return {namespace: sorted(flags) for namespace, flags in STOPPERS.items()}


@operator.on_event(("v1", "Pod"))
async def pod_task(namespace, name, logger, **_):
    async with LOCK:
        if name not in STOPPERS.get(namespace, {}):
            flag = STOPPERS.setdefault(namespace, {}).setdefault(name, asyncio.Event())
            task = asyncio.create_task(_task_fn(logger, shouldstop=flag))
            TASKS.add(task)
            task.add_done_callback(TASKS.discard)


async def _task_fn(logger, shouldstop):
    while not shouldstop.is_set():
        await operator.clock.sleep(random.randint(1, 10))  # noqa: S311 - not for security
        logger.info("Served by the background task.")
    logger.info("Serving is finished by request.")
