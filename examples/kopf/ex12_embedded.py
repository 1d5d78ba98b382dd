"""kopf's 12-embedded: the operator runs in a thread of an application that goes on with its
own work, and is stopped gracefully when the application is done."""

import queue
import threading

from kubectrl.client import ClientConfig
from kubectrl.operator import Operator
from kubectrl.runtime import Manager

operator = Operator()
operator.memo.create_tpl, operator.memo.delete_tpl = "Hello, {name}!", "Good bye, {name}!"
KEX = ("kopf.dev/v1", "KopfExample")
ready, handled = threading.Event(), queue.Queue()


@operator.on_startup()
def started(**_):
    ready.set()


@operator.on_create(KEX)
def create_fn(name, logger, **_):
    logger.info(operator.memo.create_tpl.format(name=name))
    handled.put(("created", name))


@operator.on_delete(KEX)
def delete_fn(name, logger, **_):
    logger.info(operator.memo.delete_tpl.format(name=name))
    handled.put(("deleted", name))


def main(steps: int = 3, config: ClientConfig | None = None) -> None:
    # Start the operator in a thread and let it initialise.
    manager = Manager(config)
    operator.attach(manager)
    thread = threading.Thread(target=manager.run, kwargs={"handle_signals": False})
    thread.start()
    ready.wait()
    # The operator is active: run the app's activity (here: waiting for the operator to react).
    client = manager.blocking_client  # usable from any thread
    for step in range(steps):
        meta = {"name": f"kopf-example-{step}", "namespace": "default"}
        client.create({"apiVersion": KEX[0], "kind": KEX[1], "metadata": meta})
        handled.get(timeout=60)  # ("created", name)
        client.delete(KEX, meta["name"], namespace="default")
        handled.get(timeout=60)  # ("deleted", name)
    # Ask the operator to terminate gracefully.
    manager.stop()
    thread.join()


if __name__ == "__main__":
    main()
