"""kopf's 06-peering: one active operator among replicas. kopf elects it by peering objects;
kubectrl by the manager's leader election (``ManagerOptions(leader_election=True)``): an
Operator is a leader-only runnable, so a standby replica handles nothing until it leads."""

from kubectrl.operator import Operator

operator = Operator()


@operator.on_create(("kopf.dev/v1", "KopfExample"))
def create_fn(**_):
    pass
