"""The project's import graph, read from the source with `ast` (nothing is imported)."""

from __future__ import annotations

import ast
from dataclasses import dataclass, field
from pathlib import Path

PROJECT_PACKAGES = ("flows", "tasks", "schemas")


@dataclass
class ImportGraph:
    """Module name -> project modules it imports, and imports found inside function bodies."""

    files: dict[str, Path]
    edges: dict[str, set[str]] = field(default_factory=dict)
    function_level: list[str] = field(default_factory=list)  # "module:line -> target"

    def resolve(self, name: str) -> str | None:
        """The project module a dotted import name refers to (a module or a name inside one)."""
        while name and name not in self.files:
            name = name.rpartition(".")[0]
        return name or None


def module_name(root: Path, path: Path) -> str:
    return ".".join(path.relative_to(root).with_suffix("").parts).removesuffix(".__init__")


def imported_names(node: ast.Import | ast.ImportFrom) -> list[str]:
    if isinstance(node, ast.Import):
        return [alias.name for alias in node.names]
    base = node.module or ""
    return [base] + [f"{base}.{alias.name}" for alias in node.names]


def read_import_graph(root: Path) -> ImportGraph:
    files = {module_name(root, p): p for package in PROJECT_PACKAGES for p in (root / package).rglob("*.py")}
    graph = ImportGraph(files)
    for module, path in files.items():
        tree = ast.parse(path.read_text(encoding="utf-8"))
        targets: set[str] = set()
        for node in ast.walk(tree):
            if isinstance(node, (ast.Import, ast.ImportFrom)):
                targets.update(t for n in imported_names(node) if (t := graph.resolve(n)) and t != module)
        graph.edges[module] = targets
        for function in ast.walk(tree):
            if isinstance(function, (ast.FunctionDef, ast.AsyncFunctionDef)):
                for node in ast.walk(function):
                    if isinstance(node, (ast.Import, ast.ImportFrom)):
                        graph.function_level += [
                            f"{module}:{node.lineno} -> {t}"
                            for n in imported_names(node)
                            if (t := graph.resolve(n))
                        ]
    return graph


def import_cycles(edges: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components of more than one module (Tarjan, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    cycles: list[list[str]] = []
    for start in sorted(edges):
        if start in index:
            continue
        work = [(start, iter(sorted(edges.get(start, ()))))]
        index[start] = low[start] = len(index)
        stack.append(start)
        on_stack.add(start)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(edges.get(child, ())))))
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
                if len(component) > 1:
                    cycles.append(sorted(component))
    return cycles


def package_of(module: str, files: dict[str, Path]) -> str:
    """The part a module belongs to: its own package when it is one, else the package holding it;
    a loose module at the top of `tasks` or `flows` is a part of its own (those are not parts)."""
    path = files[module]
    if path.name == "__init__.py":
        return module
    parent = module.rpartition(".")[0]
    return module if parent in PROJECT_PACKAGES else parent


def package_edges(graph: ImportGraph) -> dict[str, set[str]]:
    """Imports between parts (a package and the packages inside it are told apart, but an import
    between a package and its own sub-package is not a dependency between parts)."""
    edges: dict[str, set[str]] = {}
    for module, targets in graph.edges.items():
        source = package_of(module, graph.files)
        edges.setdefault(source, set())
        for target in targets:
            part = package_of(target, graph.files)
            nested = part.startswith(source + ".") or source.startswith(part + ".")
            if part != source and not nested:
                edges[source].add(part)
    return edges
