"""kubectrl's shared private helpers: the one place a module of one package may import another
package's code from besides that package's public names.

Every module here imports only the standard library and kubectrl's foundations (``errors``,
``objects``, ``kinds``, ``labels``), so any package may use it without a cycle. Nothing here is
public: users import from the packages, never from ``kubectrl._internal``.

Map:

- ``blocking``: the portal that runs an asyncio client's coroutines from blocking code, and the
  wrappers that derive a blocking verb from an asynchronous one;
- ``defaults``: the "not given" sentinel of options whose default someone else decides;
- ``kinds``: a webhook or builder kind (a model class or an ``(apiVersion, kind)`` tuple) to its
  ``KindInfo``;
- ``lease``: a leader-election record as a Lease stores it, and lease expiry on the local clock
  (leader election and shard leases);
- ``selector``: a label selector as a predicate over an object;
- ``warnings``: the HTTP ``Warning`` header, written (server side) and read (client side);
- ``websocket``: the upgrade refusal an in-memory or real WebSocket reports to the client.
"""
