"""tools/draw_architecture.py: the drawn layers are the contract's, every module is drawn, no arrow points up."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
spec = importlib.util.spec_from_file_location("draw_architecture", ROOT / "tools" / "draw_architecture.py")
draw = importlib.util.module_from_spec(spec)
spec.loader.exec_module(draw)


def _modules():
    return {draw.module_name(p, ROOT) for p in (ROOT / "fctheory").rglob("*.py")} - {"fctheory"}


def test_every_library_module_lies_in_exactly_one_drawn_box():
    layers = draw.read_layers()
    missing = sorted(m for m in _modules() if draw.layer_of(m, layers) is None)
    assert missing == []
    entries = [e for layer in layers for e in layer]
    assert len(entries) == len(set(entries))


def test_only_the_cli_loading_proofs_check_points_upward():
    layers = draw.read_layers()
    up = sorted(
        (a, b)
        for a, b in draw.import_edges()
        if draw.layer_of(a, layers)
        and draw.layer_of(b, layers)
        and draw.layer_of(b, layers)[0] < draw.layer_of(a, layers)[0]
    )
    assert up and all(a == "fctheory.cli.check" and b.startswith("proofs_check") for a, b in up)


def test_relative_imports_resolve_to_the_imported_module(tmp_path):
    pkg = tmp_path / "pkg"
    (pkg / "sub").mkdir(parents=True)
    (pkg / "__init__.py").write_text("")
    (pkg / "a.py").write_text("from .sub import b\n")
    (pkg / "sub" / "__init__.py").write_text("from . import b\n")
    (pkg / "sub" / "b.py").write_text("def f():\n    from ..a import x\n")
    edges = draw.import_edges(tmp_path, packages=("pkg",))
    assert {("pkg.a", "pkg.sub.b"), ("pkg.sub", "pkg.sub.b"), ("pkg.sub.b", "pkg.a")} <= edges


def test_the_picture_is_written(tmp_path):
    pytest.importorskip("matplotlib")
    out = tmp_path / "a.png"
    assert draw.main(["--out", str(out)]) == 0
    assert out.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
