"""Admission, as the generic store runs it (k8s.io/apiserver ``pkg/admission``): the write's
attributes and the chain of plugins (:mod:`.admission`), the NamespaceLifecycle plugin
(:mod:`.lifecycle`) and the ValidatingAdmissionPolicy plugin (:mod:`.policy`). The extension
API server's rules are a validating plugin of its own
(:mod:`kubectrl.apiserver._server.declare`)."""
