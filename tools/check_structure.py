"""Structural checks of the library source that ruff and import-linter do not make.

Parses ``fctheory/`` and ``proofs_check/`` with :mod:`ast` (nothing is imported) and prints one line per
finding, exiting with status 1 when there is any:

* ``cycle``: an import cycle among the scanned modules. Module-level AND function-level imports count
  (an import inside a function is still a dependency); imports under ``if TYPE_CHECKING:`` do not (they
  never run). ``from pkg import name`` is an edge to ``pkg.name`` when that is a module, else to ``pkg``.
  The implicit import of a parent package's ``__init__`` is not an edge (every submodule would otherwise
  sit on a cycle through its package). Cycles are found as the strongly connected components of the graph
  (Tarjan).
* ``long-function``: a function or method (``def``/``async def``) longer than :data:`MAX_LINES` lines,
  counted from the ``def`` line to its last line.
* ``long-file``: a source file longer than :data:`MAX_FILE_LINES` lines (a file a maintainer reads in one
  sitting), except the files of :data:`LONG_FILES_ALLOWED`, left to the issues that rewrite them (each removes
  its own line when it lands).
* ``private-import``: a private name (``_x``) imported from a module of another package, or a private
  module imported from a package that is not the importer's own package or one of its ancestors.
  A package is a directory: ``fctheory/risk/_engine.py`` may export underscore-free names to
  ``fctheory/risk/*`` (and ``fctheory/_validate.py``, the shared private layer, to everything under
  ``fctheory/``), but ``fctheory/finite_sample.py`` may not take ``fctheory.risk._engine`` or
  ``fctheory.task._as_rng`` may not be taken from ``fctheory/risk/``.
* ``local-import``: an import of a scanned (first-party) module inside a function body. Only optional
  third-party dependencies may be imported lazily; the first-party exceptions (:data:`LAZY_ALLOWED`) are
  ``fctheory.cli`` loading ``proofs_check`` on demand, and the numba-compiled kernel modules, whose import
  loads numba (about a second) and which a plain ``import fctheory`` therefore never pays for.

Usage: ``python3 tools/check_structure.py [--root DIR] [PACKAGE ...]`` (default: the repository root and
the packages ``fctheory proofs_check``).
"""

from __future__ import annotations

import argparse
import ast
import sys
from dataclasses import dataclass, field
from pathlib import Path

MAX_LINES = 80
MAX_FILE_LINES = 800
#: files allowed over MAX_FILE_LINES until the change that rewrites each lands: imbalanced data (metrics/nc.py,
#: torch/monitor.py)
LONG_FILES_ALLOWED = (
    "fctheory/metrics/nc.py",
    "fctheory/torch/monitor.py",
)
DEFAULT_PACKAGES = ("fctheory", "proofs_check")
# (importer prefix, imported prefix): first-party imports that may stay inside a function ("" matches any importer)
LAZY_ALLOWED = (
    ("fctheory.cli", "proofs_check"),
    # fctheory.risk re-exports the optima on first access: they import the engine's modules (a package-level wait)
    ("fctheory.risk", "fctheory.optima"),
    ("", "fctheory._blas"),
    ("", "fctheory._kernels"),
    ("", "fctheory._nc_kernels"),
    ("", "fctheory.risk._kernels"),
    ("", "fctheory.trainer._numba_kernels"),
)


@dataclass
class Import:
    """One import statement's target, resolved to absolute dotted names."""

    target: str  # the module named by the statement (``from target import ...`` / ``import target``)
    names: tuple[str, ...]  # the names taken by ``from target import ...``; empty for ``import target``
    lineno: int
    in_function: bool


@dataclass
class Module:
    """A parsed source file."""

    name: str  # dotted module name
    path: Path
    package: str  # dotted name of the directory holding the file
    tree: ast.Module
    imports: list[Import] = field(default_factory=list)
    n_lines: int = 0  # lines of the file, as ``wc -l`` counts them (a last line without a newline included)


def _is_private(name: str) -> bool:
    return name.startswith("_") and not (name.startswith("__") and name.endswith("__"))


def _module_name(rel: Path) -> str:
    parts = list(rel.with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _is_type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def _resolve(module: Module, node: ast.ImportFrom) -> str:
    """Absolute dotted name of the module named by a ``from ... import`` statement."""
    if not node.level:
        return node.module or ""
    base = module.package.split(".")
    if node.level > 1:
        base = base[: len(base) - (node.level - 1)]
    return ".".join(base + ([node.module] if node.module else []))


def _collect_imports(module: Module) -> None:
    """Fill ``module.imports``, noting whether each one sits inside a function body."""

    def visit(node: ast.AST, in_function: bool) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.If) and _is_type_checking(child.test):
                for sub in child.orelse:  # the ``else`` branch of ``if TYPE_CHECKING`` runs
                    visit_one(sub, in_function)
                continue
            visit_one(child, in_function)

    def visit_one(child: ast.AST, in_function: bool) -> None:
        if isinstance(child, ast.Import):
            for alias in child.names:
                module.imports.append(Import(alias.name, (), child.lineno, in_function))
        elif isinstance(child, ast.ImportFrom):
            names = tuple(alias.name for alias in child.names)
            module.imports.append(Import(_resolve(module, child), names, child.lineno, in_function))
        else:
            nested = in_function or isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda))
            visit(child, nested)

    visit(module.tree, False)


def load_modules(root: Path, packages: tuple[str, ...] | list[str]) -> dict[str, Module]:
    """Parse every ``.py`` file under ``root/<package>`` for each package name."""
    modules: dict[str, Module] = {}
    for package in packages:
        for path in sorted((root / package).rglob("*.py")):
            rel = path.relative_to(root)
            name = _module_name(rel)
            text = path.read_text(encoding="utf-8")
            tree = ast.parse(text, filename=str(path))
            module = Module(name, rel, ".".join(rel.parent.parts), tree, n_lines=len(text.splitlines()))
            _collect_imports(module)
            modules[name] = module
    return modules


def _known(name: str, modules: dict[str, Module]) -> str | None:
    """The longest prefix of ``name`` that is a scanned module, or None."""
    parts = name.split(".")
    while parts:
        candidate = ".".join(parts)
        if candidate in modules:
            return candidate
        parts.pop()
    return None


def _targets(imp: Import, modules: dict[str, Module]) -> list[str]:
    """The scanned modules an import statement loads (``from pkg import sub`` loads ``pkg.sub``)."""
    if not imp.names:
        found = _known(imp.target, modules)
        return [found] if found else []
    out = []
    for name in imp.names:
        found = _known(f"{imp.target}.{name}", modules) if name != "*" else None
        if found is None or found == _known(imp.target, modules):
            found = _known(imp.target, modules)
        if found and found not in out:
            out.append(found)
    return out


def import_graph(modules: dict[str, Module]) -> dict[str, set[str]]:
    """Edges module -> modules it imports (module level and function level)."""
    graph: dict[str, set[str]] = {name: set() for name in modules}
    for name, module in modules.items():
        for imp in module.imports:
            graph[name].update(t for t in _targets(imp, modules) if t != name)
    return graph


def strongly_connected(graph: dict[str, set[str]]) -> list[list[str]]:
    """Tarjan's strongly connected components (iterative), each sorted; singletons included."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    components: list[list[str]] = []
    counter = 0
    for start in sorted(graph):
        if start in index:
            continue
        work = [(start, iter(sorted(graph[start])))]
        index[start] = low[start] = counter
        counter += 1
        stack.append(start)
        on_stack.add(start)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = counter
                    counter += 1
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph[child]))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                components.append(sorted(component))
    return components


def _cycle_path(component: list[str], graph: dict[str, set[str]]) -> list[str]:
    """One concrete cycle through the first member of a strongly connected component (BFS)."""
    members = set(component)
    start = component[0]
    parent: dict[str, str] = {}
    frontier = [start]
    while frontier:
        nxt = []
        for node in frontier:
            for child in sorted(graph[node] & members):
                if child == start:
                    path = [node]
                    while path[-1] != start:
                        path.append(parent[path[-1]])
                    return [start, *reversed(path[:-1]), start] if len(path) > 1 else [start, node, start]
                if child not in parent:
                    parent[child] = node
                    nxt.append(child)
        frontier = nxt
    return component


def find_cycles(modules: dict[str, Module]) -> list[str]:
    graph = import_graph(modules)
    findings = []
    for component in strongly_connected(graph):
        if len(component) > 1:
            path = " -> ".join(_cycle_path(component, graph))
            findings.append(f"cycle: import cycle among {', '.join(component)} (e.g. {path})")
    return sorted(findings)


def find_long_functions(modules: dict[str, Module], max_lines: int = MAX_LINES) -> list[str]:
    findings = []
    for module in modules.values():
        for node in ast.walk(module.tree):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                length = node.end_lineno - node.lineno + 1
                if length > max_lines:
                    findings.append(
                        f"{module.path}:{node.lineno}: long-function: {node.name} is {length} lines (> {max_lines})"
                    )
    return findings


def find_long_files(
    modules: dict[str, Module], max_lines: int = MAX_FILE_LINES, allowed: tuple = LONG_FILES_ALLOWED
) -> list[str]:
    findings = []
    for module in modules.values():
        if module.n_lines > max_lines and module.path.as_posix() not in allowed:
            findings.append(
                f"{module.path}: long-file: {module.n_lines} lines (> {max_lines}); split it along its concepts"
            )
    return sorted(findings)


def _within(package: str, ancestor: str) -> bool:
    return not ancestor or package == ancestor or package.startswith(ancestor + ".")


def find_private_imports(modules: dict[str, Module]) -> list[str]:
    findings = []
    for module in modules.values():
        for imp in module.imports:
            for target in _targets(imp, modules):
                target_package = modules[target].package if target in modules else target.rpartition(".")[0]
                # a private module (or a module under a private package) outside the importer's package line
                private_parts = [p for p in target.split(".") if _is_private(p)]
                if private_parts and not _within(module.package, target_package):
                    findings.append(
                        f"{module.path}:{imp.lineno}: private-import: private module {target} "
                        f"imported from package {module.package}"
                    )
            from_package = modules[imp.target].package if imp.target in modules else None
            if from_package is None or from_package == module.package:
                continue
            for name in imp.names:
                if _is_private(name) and f"{imp.target}.{name}" not in modules:
                    findings.append(
                        f"{module.path}:{imp.lineno}: private-import: {imp.target}.{name} "
                        f"imported from package {module.package}"
                    )
    return findings


def find_local_imports(modules: dict[str, Module]) -> list[str]:
    findings = []
    for module in modules.values():
        for imp in module.imports:
            if not imp.in_function:
                continue
            for target in _targets(imp, modules):
                if any(_within(module.name, a) and _within(target, b) for a, b in LAZY_ALLOWED):
                    continue
                findings.append(
                    f"{module.path}:{imp.lineno}: local-import: {target} imported inside a function of {module.name}"
                )
    return findings


def check(root: Path, packages: tuple[str, ...] | list[str] = DEFAULT_PACKAGES) -> list[str]:
    """All findings for the given packages under ``root``, one line each."""
    modules = load_modules(root, packages)
    return [
        *find_cycles(modules),
        *find_long_functions(modules),
        *find_long_files(modules),
        *find_private_imports(modules),
        *find_local_imports(modules),
    ]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--root", type=Path, default=Path(__file__).resolve().parent.parent)
    parser.add_argument("packages", nargs="*", default=list(DEFAULT_PACKAGES))
    args = parser.parse_args(argv)
    findings = check(args.root, args.packages)
    for line in findings:
        print(line)
    return 1 if findings else 0


if __name__ == "__main__":
    sys.exit(main())
