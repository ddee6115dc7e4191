"""Griffe extension for the API reference (loaded from mkdocs.yml).

* Sphinx roles (:func:`tau`, :class:`~fctheory.Task`) are shown as inline code: the docstrings are
  numpydoc written for both Sphinx and plain reading, and mkdocstrings would print the role markup.
* An attribute of a class (a dataclass field, typically) without a docstring of its own takes the
  description its class gives it in the numpydoc ``Attributes`` section (or, for a dataclass field, the
  ``Parameters`` section), so its block on the page is not empty (``a, b : type`` documents both names).
  A class attribute described nowhere gets no block of its own (it stays in its class's signature), so the
  reference never shows an empty attribute block; document it in its class's ``Attributes`` section or
  with a docstring under the assignment and it appears. (A module constant keeps its block: a name in a
  module's ``__all__`` is always rendered; give it a docstring under the assignment.)
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
        self._functions = {}  # path -> the last Function seen under that path

    def on_instance(self, *, obj, **kwargs):
        if obj.docstring is not None:
            obj.docstring.value = ROLE.sub(_code, obj.docstring.value)

    def on_class_members(self, *, cls, **kwargs):
        if cls.docstring is None:
            return
        described = {}
        for section in griffe.parse_numpy(cls.docstring, warnings=False):
            # a dataclass documents its fields as Attributes, or as Parameters of its constructor
            if section.kind in (griffe.DocstringSectionKind.attributes, griffe.DocstringSectionKind.parameters):
                for attr in section.value:
                    for name in attr.name.split(","):
                        described.setdefault(name.strip(), attr.description)
        for name, member in cls.members.items():
            if getattr(member, "is_attribute", False) and member.docstring is None and described.get(name):
                member.docstring = griffe.Docstring(described[name], parent=member)

    def on_package(self, *, pkg, **kwargs):
        # griffe runs its built-in dataclasses extension after this one: build the constructors' signatures
        # first (it skips a class that already has an __init__), so a dropped field stays in its signature
        griffe.DataclassesExtension().on_package(pkg=pkg)
        _drop_undocumented_attributes(pkg)

    def on_function_instance(self, *, node, func, **kwargs):
        wrapped = None
        for deco in getattr(node, "decorator_list", []):
            if (
                isinstance(deco, ast.Call)
                and isinstance(deco.func, (ast.Attribute, ast.Name))
                and (deco.func.attr if isinstance(deco.func, ast.Attribute) else deco.func.id) == "wraps"
                and deco.args
                and isinstance(deco.args[0], ast.Name)
            ):
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


def _drop_undocumented_attributes(pkg):
    for cls, name in list(_undocumented_class_attributes(pkg)):
        cls.del_member(name)


def _undocumented_class_attributes(obj):
    for name, member in list(obj.members.items()):
        if member.is_alias:
            continue
        if obj.is_class and member.is_attribute and member.docstring is None:
            yield obj, name
        elif member.is_class or member.is_module:
            yield from _undocumented_class_attributes(member)
