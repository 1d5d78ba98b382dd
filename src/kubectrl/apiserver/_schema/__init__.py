"""Schemas: a custom resource's structural schema (:mod:`.structural`: pruning, defaulting,
validation, with :mod:`.cel`, :mod:`.re2`, :mod:`.formats` and :mod:`.values`), the built-in
kinds as Go types (:mod:`.gotypes`, with :mod:`.quantity`), and the fields a schema does not
declare (:mod:`.field_validation`: ``fieldValidation``)."""
