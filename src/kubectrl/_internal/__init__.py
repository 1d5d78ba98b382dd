"""kubectrl's shared private helpers: the one place a module of one package may import another
package's code from besides that package's public names.

Every module here imports only the standard library and kubectrl's foundations (``errors``,
``objects``, ``kinds``, ``labels``), so any package may use it without a cycle. Nothing here is
public: users import from the packages, never from ``kubectrl._internal``.

Map:

- ``aio``: bounded awaits that keep a cancellation, calling into a loop from any thread;
- ``blocking``: the portal that runs an asyncio client's coroutines from blocking code, and the
  wrappers that derive a blocking verb from an asynchronous one;
- ``checks``: the checks both clients run before sending anything (a verb's options against its
  typed bundle, names as path segments, ``matching_fields``);
- ``clock``: ``Clock``, ``RealClock`` and ``FakeClock`` (public as ``kubectrl.FakeClock``, ...);
- ``defaults``: the "not given" sentinel of options whose default someone else decides;
- ``kinds``: a webhook or builder kind (a model class or an ``(apiVersion, kind)`` tuple) to its
  ``KindInfo``;
- ``exports``: publishing a package's names (``__module__``) and its deprecated spellings;
- ``lease``: a leader-election record as a Lease stores it, and lease expiry on the local clock
  (leader election and shard leases);
- ``merge``: the JSON merge patch between two objects;
- ``selector``: a label selector as a predicate over an object;
- ``warnings``: the HTTP ``Warning`` header, written (server side) and read (client side);
- ``websocket``: the upgrade refusal an in-memory or real WebSocket reports to the client.
"""
