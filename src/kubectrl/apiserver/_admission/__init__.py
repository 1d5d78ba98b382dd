"""Admission, as the generic store runs it (k8s.io/apiserver ``pkg/admission``): the write's
attributes and the chain of plugins (:mod:`.admission`), the NamespaceLifecycle plugin
(:mod:`.lifecycle`), the ValidatingAdmissionPolicy plugin (:mod:`.policy`) and the
MutatingAdmissionPolicy plugin (:mod:`.policy_mutating`). The extension
API server's rules are a validating plugin of its own
(:mod:`kubectrl.apiserver._server.declare`)."""
