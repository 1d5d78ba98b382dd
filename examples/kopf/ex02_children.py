"""kopf's 02-children: create a Pod owned by the object, then record its uid in the status."""

import yaml

from kubectrl.operator import Operator, adopt

operator = Operator()


@operator.on_create(("kopf.dev/v1", "KopfExample"))
async def create_fn(body, spec, **_):
    # Render the pod with some spec fields used in the template.
    pod = yaml.safe_load(f"""
        apiVersion: v1
        kind: Pod
        spec:
          containers:
          - name: the-only-one
            image: busybox
            command: ["sh", "-x", "-c"]
            args:
            - |
              echo "FIELD=$FIELD"
              sleep {spec.get("duration", 0)}
            env:
            - name: FIELD
              value: {spec.get("field", "default-value")}
    """)
    # Make it our child: namespace, generateName, labels, the owner reference.
    adopt(pod, body)
    # Create it through the manager's client (live writes, cached reads).
    pod = await operator.client.create(pod)
    return {"children": [pod["metadata"]["uid"]]}  # stored as status.create_fn
