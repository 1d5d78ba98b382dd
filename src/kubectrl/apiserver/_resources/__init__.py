"""What the core serves: the description of a resource (:mod:`.info`), which resources are
served (:mod:`.registry`) and their discovery documents (:mod:`.discovery`), and what every
stored object shares (:mod:`.objects`: rendering at a version, key order, limits, decoding)."""
