"""Validation: what every object's gets (:mod:`.objects`, with :mod:`.metadata`), the built-in
kinds' field checks their strategies run (:mod:`.kinds`), and the CRDs the apiserver refuses
(:mod:`.crds`)."""
