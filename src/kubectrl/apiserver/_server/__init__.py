"""The extension API server: the core over HTTPS (:mod:`.server`), the kinds, admission rules
and custom subresources it is declared with (:mod:`.declare`), delegated authentication and
authorization (:mod:`.auth`), its certificate (:mod:`.tls`), OpenAPI (:mod:`.openapi`) and
``Table`` output (:mod:`.table`)."""
