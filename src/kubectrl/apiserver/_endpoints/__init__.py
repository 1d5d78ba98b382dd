"""The endpoints: :class:`~.core.APICore`, which serves a routed request's verb
(:mod:`.core`), list and watch selection (:mod:`.selection`), the watch hub and its streams
(:mod:`.watch`) and the ``scale`` subresource (:mod:`.scale`)."""
