"""The compilation of admission policies' CEL expressions, as kube-apiserver refuses them.

``k8s.io/apiserver`` ``pkg/admission/plugin/cel/compile.go``: an expression that does not parse
or calls an unknown function (``compilation failed: ...``), or whose result type is not one of
those its field takes (``must evaluate to bool but got int``). The type is known here only where
it does not depend on the objects (literals, operators, the functions whose result type is
fixed); everything else is ``dyn``, as for the apiserver when it compiles a policy (its
``status.typeChecking`` against the matched kinds is not done).
"""

from __future__ import annotations

from typing import Any

from kubectrl.apiserver._schema import cel

__all__ = ["compile_expression"]


def compile_expression(text: str, returns: tuple[str, ...] = ()) -> str | None:
    """Why the apiserver refuses to compile a policy's expression (``compilation failed: ...``,
    or one whose type is not one of ``returns``: ``must evaluate to ... but got ...``), or
    ``None``.

    The type is known only where it does not depend on the objects (literals, operators, the
    functions whose result type is fixed); everything else is ``dyn``, as for the apiserver
    when it compiles a policy (the kinds it matches are not known then).
    """
    try:
        compiled = cel.compile_rule(text)
    except cel.CompileError as err:
        return str(err)
    found = _type_of(compiled.tree)
    if returns and found is not None and found not in returns:
        wanted = returns[0] if len(returns) == 1 else "[" + " ".join(returns) + "]"
        return f"must evaluate to {'' if len(returns) == 1 else 'one of '}{wanted} but got {found}"
    return None


_LITERALS = {"INT_LIT": "int", "UINT_LIT": "uint", "FLOAT_LIT": "double",
             "STRING_LIT": "string", "MLSTRING_LIT": "string", "BYTES_LIT": "bytes",
             "BOOL_LIT": "bool", "NULL_LIT": "null_type"}  # fmt: skip
_RESULTS = {"size": "int", "int": "int", "uint": "uint", "double": "double", "string": "string",
            "bool": "bool", "has": "bool", "startsWith": "bool", "endsWith": "bool",
            "contains": "bool", "matches": "bool", "all": "bool", "exists": "bool",
            "exists_one": "bool", "isSorted": "bool", "lowerAscii": "string",
            "upperAscii": "string", "trim": "string", "indexOf": "int",
            "lastIndexOf": "int"}  # fmt: skip


def _type_of(node: Any) -> str | None:
    """The CEL type of a parse tree node, where it does not depend on the input; else
    ``None`` (dyn)."""
    while True:
        data = getattr(node, "data", None)
        kids = [k for k in getattr(node, "children", ()) if k is not None]
        if data is None or data in ("list_lit", "map_lit", "member_object", "member_index"):
            return None
        if data in ("conditionalor", "conditionaland") and len(kids) > 1:
            return "bool"
        operator = str(getattr(kids[0], "data", "")) if kids else ""
        if operator.startswith("relation_") or operator == "unary_not":
            return "bool"
        if operator.startswith(("addition_", "multiplication_")) and len(kids) == 2:
            left = _type_of(kids[0].children[0]) if kids[0].children else None
            right = _type_of(kids[1])
            return left if left is not None and left == right else None
        if operator == "unary_neg" and len(kids) == 2:
            return _type_of(kids[1])
        if data == "literal":
            return _LITERALS.get(str(getattr(kids[0], "type", "")))
        if data in ("ident_arg", "member_dot_arg"):
            token = kids[1] if data == "member_dot_arg" else kids[0]
            return _RESULTS.get(str(getattr(token, "value", token)))
        if len(kids) != 1 or not hasattr(kids[0], "data"):
            return None  # the conditional operator, an identifier, a field
        node = kids[0]
