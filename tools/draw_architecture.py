"""Draw docs/architecture.png: fctheory's layers (from the import-linter contract) and the imports between them.

Run from the repository root: ``python3 tools/draw_architecture.py``. The layers are read from the ``layers``
contract in pyproject.toml (the same contract ``lint-imports`` enforces), the arrows from the code's own
imports (``ast``), so the picture cannot drift from the code: ``tests/tools/test_draw_architecture.py`` checks that
every module is drawn in exactly one layer and that no drawn arrow points upward.
"""

from __future__ import annotations

import argparse
import ast
import sys
import tomllib
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def read_layers(pyproject: Path = ROOT / "pyproject.toml") -> list[list[str]]:
    """The layers of the ``layers`` contract, top first; each layer is a list of module names."""
    conf = tomllib.loads(pyproject.read_text())
    for contract in conf["tool"]["importlinter"]["contracts"]:
        if contract["type"] == "layers":
            prefix = contract["containers"][0] + "." if contract.get("containers") else ""
            layers = [
                [prefix + m.strip().strip("()") for m in layer.replace(":", "|").split("|")]
                for layer in contract["layers"]
            ]
            # proofs_check sits above the whole library (the second contract forbids the reverse)
            return [["proofs_check"], *layers]
    raise SystemExit("pyproject.toml has no import-linter contract of type 'layers'")


def module_name(path: Path, root: Path) -> str:
    parts = list(path.relative_to(root).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def import_edges(root: Path = ROOT, packages=("fctheory", "proofs_check")) -> set[tuple[str, str]]:
    """(importer, imported) pairs between modules of the given packages, module and function level."""
    files = [p for pkg in packages for p in (root / pkg).rglob("*.py")]
    known = {module_name(p, root) for p in files}
    edges = set()
    for p in files:
        mod = module_name(p, root)
        is_pkg = p.name == "__init__.py"
        for node in ast.walk(ast.parse(p.read_text(), str(p))):
            targets = []
            if isinstance(node, ast.Import):
                targets = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:
                    pkg = mod.split(".") if is_pkg else mod.split(".")[:-1]
                    pkg = pkg[: len(pkg) - node.level + 1]
                    base = ".".join(pkg + ([base] if base else []))
                targets = [f"{base}.{a.name}" for a in node.names] + [base]
            for t in targets:
                while t and t not in known:
                    t = t.rpartition(".")[0]
                if t and t != mod:
                    edges.add((mod, t))
    return edges


def layer_of(module: str, layers: list[list[str]]) -> tuple[int, str] | None:
    """(layer index, the layer entry that contains ``module``), longest prefix match; None if not in any."""
    best = None
    for i, layer in enumerate(layers):
        for entry in layer:
            if module == entry or module.startswith(entry + "."):
                if best is None or len(entry) > len(best[1]):
                    best = (i, entry)
    return best


def box_edges(layers, edges):
    """Imports aggregated to the drawn boxes (the contract's entries), without self-loops."""
    out = defaultdict(int)
    for a, b in edges:
        la, lb = layer_of(a, layers), layer_of(b, layers)
        if la and lb and la[1] != lb[1]:
            out[(la[1], lb[1])] += 1
    return dict(out)


def drawn_layers(layers, max_boxes: int = 6):
    """The boxes drawn per layer: a layer of more than ``max_boxes`` modules is one box naming them all."""
    out = []
    for layer in layers:
        if len(layer) > max_boxes:
            out.append([("+".join(layer), layer)])
        else:
            out.append([(entry, [entry]) for entry in layer])
    return out


def draw(layers, boxes, out: Path) -> None:
    import matplotlib  # noqa: PLC0415 - optional dependency (the plot extra)

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt  # noqa: PLC0415 - optional dependency (the plot extra)

    shown = drawn_layers(layers)
    width = max(len(layer) for layer in shown)
    fig, ax = plt.subplots(figsize=(13, 0.95 * len(shown) + 1.2))
    pos, owner = {}, {}
    for i, layer in enumerate(shown):
        y = len(shown) - 1 - i
        x0 = (width - len(layer)) / 2
        for j, (key, members) in enumerate(layer):
            x = x0 + j + 0.5
            pos[key] = (x, y)
            for m in members:
                owner[m] = key
            names = [m.removeprefix("fctheory.") for m in members]
            label = (
                names[0] if len(names) == 1 else "\n".join(" ".join(names[k : k + 7]) for k in range(0, len(names), 7))
            )
            ax.text(
                x,
                y,
                label,
                ha="center",
                va="center",
                fontsize=8 if len(names) == 1 else 7,
                bbox=dict(boxstyle="round,pad=0.35", fc="#e8f0fe", ec="#3c6ea8"),
            )
        ax.axhline(y - 0.5, color="#e5e5e5", lw=0.6, zorder=0)
    bottom = shown[-1][0][0]
    agg = defaultdict(int)
    for (a, b), n in boxes.items():
        if owner[a] != owner[b] and owner[b] != bottom:  # everything uses the infrastructure: not drawn
            agg[(owner[a], owner[b])] += n
    for (a, b), n in sorted(agg.items()):
        (xa, ya), (xb, yb) = pos[a], pos[b]
        up = yb > ya
        ax.annotate(
            "",
            xy=(xb, yb + 0.2),
            xytext=(xa, ya - 0.2),
            arrowprops=dict(
                arrowstyle="->",
                lw=0.4 + 0.12 * min(n, 10),
                alpha=0.5,
                color="#c0392b" if up else "#555555",
                linestyle="--" if up else "-",
            ),
        )
    ax.set_xlim(0, width)
    ax.set_ylim(-0.6, len(shown) - 0.4)
    ax.axis("off")
    ax.set_title(
        "fctheory layers, top to bottom (pyproject.toml, held by lint-imports); arrows: imports, "
        "thicker = more; arrows into the bottom layer (used by all) not drawn;\n"
        "dashed red = upward: only fctheory check loading proofs_check on demand",
        fontsize=8.5,
    )
    fig.tight_layout()
    fig.savefig(out, dpi=120)
    plt.close(fig)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", type=Path, default=ROOT / "docs" / "architecture.png")
    args = ap.parse_args(argv)
    layers = read_layers()
    boxes = box_edges(layers, import_edges())
    draw(layers, boxes, args.out)
    print(f"wrote {args.out} ({sum(len(x) for x in layers)} boxes, {len(boxes)} arrows)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
