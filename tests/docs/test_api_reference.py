"""The API reference renders every dataclass attribute with content, never as an empty block.

mkdocstrings gives each class attribute (each dataclass field) a block of its own, filled from the attribute's
own docstring. docs/reference/griffe_extension.py fills it from the class's numpydoc ``Attributes`` (or
``Parameters``) section and leaves out an attribute described nowhere. The fast tests check the configuration
and the extension on a small module; the slow one builds the site and reads the HTML.
"""

from __future__ import annotations

import importlib.util
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
EXTENSION = ROOT / "docs" / "reference" / "griffe_extension.py"

# one class-attribute block of the built HTML and its contents (empty: nothing but white space)
_ATTRIBUTE_BLOCK = re.compile(
    r'<div class="doc doc-object doc-attribute">\s*<h\d id="(?P<id>[^"]+)"(?P<heading>.*?)</h\d>'
    r'.*?<div class="doc doc-contents ?">(?P<body>.*?)</div>',
    re.S,
)


def empty_class_attribute_blocks(html: str) -> list:
    """Ids of the class-attribute blocks of a rendered page whose contents are empty."""
    return [
        m["id"]
        for m in _ATTRIBUTE_BLOCK.finditer(html)
        if "doc-label-module-attribute" not in m["heading"] and not m["body"].strip()
    ]


def _extension():
    spec = importlib.util.spec_from_file_location("griffe_extension", EXTENSION)
    ext = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(ext)
    return ext


def test_the_reference_loads_the_extension_and_reads_numpydoc():
    yaml = pytest.importorskip("yaml")
    # mkdocs.yml carries !!python/name tags in some setups: read it as plain data
    config = yaml.load((ROOT / "mkdocs.yml").read_text(encoding="utf-8"), Loader=yaml.BaseLoader)
    handler = next(p for p in config["plugins"] if isinstance(p, dict) and "mkdocstrings" in p)
    options = handler["mkdocstrings"]["handlers"]["python"]["options"]
    assert options["docstring_style"] == "numpy"
    assert "docs/reference/griffe_extension.py:ReferenceExtension" in options["extensions"]


@pytest.fixture(scope="module")
def sample(tmp_path_factory):
    griffe = pytest.importorskip("griffe")
    folder = tmp_path_factory.mktemp("sample")
    (folder / "sample.py").write_text(
        "from dataclasses import dataclass\n\n\n"
        "@dataclass\nclass Result:\n"
        '    """A result.\n\n    Attributes\n    ----------\n    tau : float\n        The optimum.\n'
        '    lo, hi\n        The bracket.\n    """\n\n'
        "    tau: float\n    lo: float\n    hi: float\n    own: int = 0\n"
        '    """Documented where it is defined."""\n    secret: int = 1\n\n\n'
        "@dataclass\nclass Config:\n"
        '    """A configuration.\n\n    Parameters\n    ----------\n'
        '    d : int\n        Embedding dimension.\n    """\n\n'
        "    d: int\n",
        encoding="utf-8",
    )
    return griffe.load(
        "sample", search_paths=[str(folder)], extensions=griffe.Extensions(_extension().ReferenceExtension())
    )


def test_an_attribute_takes_its_description_from_the_class_attributes_section(sample):
    assert sample["Result.tau"].docstring.value == "The optimum."
    assert sample["Result.lo"].docstring.value == sample["Result.hi"].docstring.value == "The bracket."


def test_a_dataclass_field_takes_its_description_from_the_parameters_section(sample):
    assert sample["Config.d"].docstring.value == "Embedding dimension."


def test_an_attribute_keeps_its_own_docstring(sample):
    assert sample["Result.own"].docstring.value == "Documented where it is defined."


def test_an_attribute_described_nowhere_has_no_block_but_stays_in_the_signature(sample):
    assert "secret" not in sample["Result"].members
    assert "secret" in [p.name for p in sample["Result"]["__init__"].parameters]


def test_the_html_check_finds_an_empty_block():
    block = (
        '<div class="doc doc-object doc-attribute">\n<h4 id="m.C.{name}" class="doc doc-heading">\n'
        '<small class="doc doc-label doc-label-{label}"></small></h4>\n'
        '<div class="doc doc-contents ">\n{body}\n</div>\n</div>\n'
    )
    html = (
        block.format(name="empty", label="instance-attribute", body="")
        + block.format(name="full", label="instance-attribute", body="<p>Text.</p>")
        + block.format(name="CONSTANT", label="module-attribute", body="")
    )
    assert empty_class_attribute_blocks(html) == ["m.C.empty"]


@pytest.mark.slow
def test_the_built_reference_has_no_empty_attribute_block(tmp_path):
    pytest.importorskip("mkdocstrings_handlers.python")
    env = dict(os.environ, NO_MKDOCS_2_WARNING="1", PYTHONPATH=str(ROOT))
    site = tmp_path / "site"
    proc = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "--config-file", str(ROOT / "mkdocs.yml"),
         "--site-dir", str(site)],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=600,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr[-3000:]
    empty = {}
    for page in sorted(site.glob("reference/**/index.html")):
        html = page.read_text(encoding="utf-8")
        empty.update(dict.fromkeys(empty_class_attribute_blocks(html), page.parent.name))
    assert not empty, f"{len(empty)} empty attribute blocks: {sorted(empty)[:20]}"
    core = (site / "reference" / "core" / "index.html").read_text(encoding="utf-8")
    block = re.search(r'id="fctheory\.TypeIPrediction\.tau".*?doc-contents ?">(.*?)</div>', core, re.S)
    assert block and "argmin H" in block[1]
