"""Griffe extension for the API reference (loaded from mkdocs.yml).

* Sphinx roles (:func:`tau`, :class:`~fctheory.Task`) are shown as inline code: the docstrings are
  numpydoc written for both Sphinx and plain reading, and mkdocstrings would print the role markup.
* A function decorated with ``functools.wraps(f)`` (a compatibility shim that re-defines a public
  name, e.g. one accepting a deprecated argument order) is documented with the signature and
  docstring of ``f``, the function that name referred to just before, as it is at run time.
"""
import ast
import re

import griffe

ROLE = re.compile(r":(?:py:)?(?:func|class|mod|meth|attr|data|obj|exc|const):`(~?)([^`]+)`")


def _code(m):  # `~a.b.C` shows as `C`, as in Sphinx
    return f"`{m[2].rpartition('.')[2] if m[1] else m[2]}`"



class ReferenceExtension(griffe.Extension):
    def __init__(self):
        super().__init__()
        self._functions = {}   # path -> the last Function seen under that path

    def on_instance(self, *, obj, **kwargs):
        if obj.docstring is not None:
            obj.docstring.value = ROLE.sub(_code, obj.docstring.value)

    def on_function_instance(self, *, node, func, **kwargs):
        wrapped = None
        for deco in getattr(node, "decorator_list", []):
            if (isinstance(deco, ast.Call) and isinstance(deco.func, (ast.Attribute, ast.Name))
                    and (deco.func.attr if isinstance(deco.func, ast.Attribute) else deco.func.id) == "wraps"
                    and deco.args and isinstance(deco.args[0], ast.Name)):
                wrapped = deco.args[0].id
        if wrapped is not None:
            # `_f = f` before the shim: wrapped names the earlier definition of this function's name
            target = func.parent.members.get(wrapped)
            name = wrapped
            if getattr(target, "is_alias", False):
                name = target.target_path.rpartition(".")[2]
            elif getattr(target, "is_attribute", False) and re.fullmatch(r"\w+", str(target.value)):
                name = str(target.value)
            earlier = self._functions.get(f"{func.parent.path}.{name}")
            if earlier is not None and earlier is not func:
                func.parameters = earlier.parameters
                func.returns = earlier.returns
                func.docstring = earlier.docstring
                if func.docstring is not None:
                    func.docstring.parent = func
        self._functions[func.path] = func
