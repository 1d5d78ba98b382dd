"""The registry: the generic store every resource is written through (:mod:`.store`, as
``pkg/registry/generic/registry/store.go``) and garbage collection with namespace termination
(:mod:`.gc`)."""
