"""The documentation builds and its examples run.

* ``mkdocs build --strict`` succeeds (broken links, missing anchors, pages left out of the nav and
  docstrings that do not parse as numpydoc are all errors), and every public name is on a reference page.
* Every fenced ```python block of README.md and docs/**/*.md is executed. A page is a tutorial: its
  blocks run in order in one namespace, in a fresh temporary working directory holding a copy of
  ``docs/`` (so ``"docs/sweeps/tau.toml"`` resolves and outputs land in the copy). ``>>>`` blocks
  (```pycon, or any block whose first line starts with ``>>>``) run as doctests in the same namespace.
  Using a deprecated (renamed) argument in an example is a failure: examples show the current API.
* Markers, an HTML comment on the last non-blank line before the fence:
  ``<!-- docs-test: skip (reason) -->`` skips a block (GPU, hours of training, network); each skip is
  reported as a skipped test with its reason. ``<!-- docs-test: run -->`` on a ```bash block runs its
  ``fctheory ...`` lines in-process through ``fctheory.cli.main`` (every line must be such a command)
  and requires exit status 0. Other shell blocks are not executed.

Build the site yourself with ``mkdocs serve`` (live preview) or ``mkdocs build --strict``.
"""

from __future__ import annotations

import contextlib
import doctest
import importlib
import importlib.util
import io
import json
import os
import re
import shlex
import shutil
import subprocess
import sys
import time
import traceback
import types
import warnings
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
DOCS = ROOT / "docs"

FENCE = re.compile(r"^(?P<indent>[ \t]*)(?P<fence>`{3,}|~{3,})[ \t]*(?P<info>[^`\s]*)")
MARKER = re.compile(r"^\s*<!--\s*docs-test:\s*(?P<body>.*?)\s*-->\s*$")
SKIP = re.compile(r"^skip\s*\((?P<reason>[^)]*\S[^)]*)\)$")
PYTHON = {"python", "py", "python3"}
PYCON = {"pycon", "doctest"}
SHELL = {"bash", "sh", "shell", "console"}


@dataclass
class Block:
    page: str  # path relative to the repository root
    path: Path  # the file (tracebacks point into it)
    line: int  # 1-based line of the first code line
    lang: str  # "python", "doctest" or "shell"
    code: str
    marker: str | None  # None, "run" or "skip"
    reason: str = ""

    @property
    def first(self) -> str:
        return next((s.strip() for s in self.code.splitlines() if s.strip()), "")

    @property
    def where(self) -> str:
        return f"{self.page}:{self.line} `{self.first}`"


def doc_pages() -> list[Path]:
    return [ROOT / "README.md"] + sorted(DOCS.rglob("*.md"))


def parse_blocks(path: Path, root: Path = ROOT) -> list[Block]:
    """The fenced code blocks of a Markdown file, with their docs-test markers."""
    page = path.relative_to(root).as_posix()
    lines = path.read_text(encoding="utf-8").splitlines()
    blocks: list[Block] = []
    i = 0
    while i < len(lines):
        m = FENCE.match(lines[i])
        if not m:
            i += 1
            continue
        fence, indent, info = m["fence"], len(m["indent"]), m["info"].lower().lstrip("{.").rstrip("}")
        prev = next((lines[j] for j in range(i - 1, -1, -1) if lines[j].strip()), "")
        mk = MARKER.match(prev)
        j = i + 1
        while j < len(lines) and not (
            lines[j].strip().startswith(fence[0] * len(fence)) and set(lines[j].strip()) == {fence[0]}
        ):
            j += 1
        body = "\n".join(s[indent:] if s[:indent].strip() == "" else s for s in lines[i + 1 : j])
        first = next((s.strip() for s in body.splitlines() if s.strip()), "")
        if info in PYCON or (info in PYTHON | {""} and first.startswith(">>>")):
            lang = "doctest"
        elif info in PYTHON:
            lang = "python"
        elif info in SHELL:
            lang = "shell"
        else:
            lang = info or "text"
        marker, reason = None, ""
        if mk:
            text = mk["body"]
            sk = SKIP.match(text)
            if sk:
                marker, reason = "skip", sk["reason"].strip()
            elif text == "run":
                marker = "run"
            else:
                raise AssertionError(
                    f"{page}:{i + 1}: unknown marker <!-- docs-test: {text} --> (use 'skip (reason)' or 'run')"
                )
        blocks.append(Block(page, path, i + 2, lang, body, marker, reason))
        i = j + 1
    return blocks


def runnable(block: Block) -> bool:
    return block.lang in ("python", "doctest") or (block.lang == "shell" and block.marker == "run")


PAGES = [p for p in doc_pages() if any(runnable(b) and b.marker != "skip" for b in parse_blocks(p))]
SKIPPED = [b for p in doc_pages() for b in parse_blocks(p) if b.marker == "skip"]


# ---------------------------------------------------------------------------------- the markers


def test_markers_are_attached_to_runnable_blocks():
    """A skip marker needs a reason and a code block it applies to; `run` is for shell blocks only."""
    bad = []
    for p in doc_pages():
        for b in parse_blocks(p):
            if b.marker == "skip" and b.lang not in ("python", "doctest"):
                bad.append(f"{b.where}: skip marker on a {b.lang} block, which is never executed")
            if b.marker == "run" and b.lang != "shell":
                bad.append(f"{b.where}: 'run' marker on a {b.lang} block (python blocks always run)")
    assert not bad, "\n".join(bad)


def test_parser_finds_blocks_and_markers(tmp_path):
    """The Markdown parser sees fences, languages, indentation and markers as written."""
    md = tmp_path / "x.md"
    md.write_text(
        "text\n\n```python\na = 1\n```\n\n<!-- docs-test: skip (needs a GPU) -->\n"
        "```python\nb = 2\n```\n\n  ```bash\n  fctheory predict --paper\n  ```\n"
        "```\n>>> 1 + 1\n2\n```\n",
        encoding="utf-8",
    )
    blocks = parse_blocks(md, root=tmp_path)
    assert [(b.lang, b.line, b.code, b.marker, b.reason) for b in blocks] == [
        ("python", 4, "a = 1", None, ""),
        ("python", 9, "b = 2", "skip", "needs a GPU"),
        ("shell", 13, "fctheory predict --paper", None, ""),
        ("doctest", 16, ">>> 1 + 1\n2", None, ""),
    ]


# ---------------------------------------------------------------------------------- the examples


def _write_page(tmp_path, text):
    md = tmp_path / "page.md"
    md.write_text(text, encoding="utf-8")
    return md


def test_runner_reports_the_failing_block_and_line(tmp_path):
    """A failing example names the page, the block's first line and the failing line."""
    md = _write_page(tmp_path, "```python\nx = 41\n```\n\n```python\ny = x\nassert y == 42, 'planted'\n```\n")
    res = run_page(md, root=tmp_path)
    assert res["ran"] == 1
    assert res["error"].startswith("page.md:6 `y = x` failed: AssertionError: planted")
    assert "at page.md:7: assert y == 42, 'planted'" in res["error"]


def test_runner_shares_the_namespace_and_skips_marked_blocks(tmp_path):
    md = _write_page(
        tmp_path,
        "```python\nx = 41\n```\n<!-- docs-test: skip (planted) -->\n```python\n"
        "raise SystemExit\n```\n```pycon\n>>> x + 1\n42\n```\n",
    )
    res = run_page(md, root=tmp_path)
    assert (res["ran"], res["error"]) == (2, None)


def test_runner_refuses_deprecated_calls_and_wrong_doctest_output(tmp_path):
    """Examples must use the current API: the DeprecationWarning of a renamed argument fails the page."""
    md = _write_page(
        tmp_path,
        "```python\nimport warnings\n"
        "warnings.warn('f: argument m is deprecated (see CHANGELOG.md)', DeprecationWarning)\n```\n",
    )
    assert "DeprecationWarning" in run_page(md, root=tmp_path)["error"]
    md = _write_page(tmp_path, "```pycon\n>>> 1 + 1\n3\n```\n")
    assert "failed" in run_page(md, root=tmp_path)["error"]


def test_run_marker_accepts_only_fctheory_commands(tmp_path):
    md = _write_page(
        tmp_path, "<!-- docs-test: run -->\n```bash\n$ fctheory predict --help  # usage\npip install fctheory\n```\n"
    )
    (block,) = parse_blocks(md, tmp_path)
    with pytest.raises(AssertionError, match="may only hold fctheory command lines"):
        _fctheory_commands(block)
    block.code = "$ fctheory predict type1 --nc 3 --nw 12 --L 2 --K 4 --lam 0.01  # τ\n# comment\n"
    assert _fctheory_commands(block) == [
        ["predict", "type1", "--nc", "3", "--nw", "12", "--L", "2", "--K", "4", "--lam", "0.01"]
    ]


def _fctheory_commands(block: Block) -> list[list[str]]:
    cmds = []
    for raw in block.code.splitlines():
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        line = line.removeprefix("$ ")
        argv = shlex.split(line, comments=True)
        if not argv or argv[0] != "fctheory":
            raise AssertionError(
                f"{block.where}: a `docs-test: run` block may only hold fctheory command lines, found {line!r}"
            )
        cmds.append(argv[1:])
    return cmds


def _run_block(block: Block, ns: dict) -> None:
    if block.lang == "python":
        # pad with newlines so that tracebacks give the line number in the Markdown file
        code = compile("\n" * (block.line - 1) + block.code, str(block.path), "exec")
        exec(code, ns)
    elif block.lang == "doctest":
        test = doctest.DocTestParser().get_doctest(block.code, ns, block.where, block.page, block.line - 1)
        out = io.StringIO()
        runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
        runner.run(test, out=out.write, clear_globs=False)
        if runner.failures:
            raise AssertionError(out.getvalue())
    else:
        from fctheory.cli import main

        for argv in _fctheory_commands(block):
            with contextlib.redirect_stdout(io.StringIO()) as so, contextlib.redirect_stderr(io.StringIO()) as se:
                try:
                    rc = main(argv)
                except SystemExit as exc:  # argparse errors
                    rc = exc.code
            if rc not in (0, None):
                raise AssertionError(
                    f"`fctheory {shlex.join(argv)}` exited with {rc}:\n{se.getvalue()[-2000:]}{so.getvalue()[-1000:]}"
                )


def run_page(page: Path, root: Path = ROOT) -> dict:
    """Run the page's blocks in order in one namespace, in the current directory; stop at the first
    failure. Returns {"ran", "slowest", "error"}."""
    ns = {"__name__": "__docs_example__"}
    ran, times = 0, [(0.0, "")]
    for block in parse_blocks(page, root):
        if not runnable(block) or block.marker == "skip":
            continue
        t0 = time.perf_counter()
        with warnings.catch_warnings():
            # examples show the current API: a renamed argument or positional use is an error
            warnings.filterwarnings("error", message=".*CHANGELOG", category=DeprecationWarning)
            try:
                _run_block(block, ns)
            except Exception as exc:  # noqa: BLE001 - report any failure with the block named
                tb = traceback.extract_tb(exc.__traceback__)
                at = [f for f in tb if f.filename == str(block.path)]
                line = f"\n  at {block.page}:{at[-1].lineno}: {at[-1].line}" if at else ""
                detail = "".join(traceback.format_exception(exc)[-8:])
                return {
                    "ran": ran,
                    "slowest": max(times),
                    "error": f"{block.where} failed: {type(exc).__name__}: {exc}{line}\n{detail}",
                }
        times.append((time.perf_counter() - t0, block.where))
        ran += 1
    return {"ran": ran, "slowest": max(times), "error": None}


#: the optional modules an example may import, and the extra that installs each (the lean install has none)
OPTIONAL_EXTRAS = {"torch": "torch", "lightning": "lightning", "transformers": "hf", "accelerate": "hf"}
_IMPORTS = re.compile(r"^\s*(?:import|from)\s+([\w.]+)", re.M)


def optional_modules_needed(page: Path, root: Path = ROOT) -> list:
    """The optional modules the page's runnable examples import (``fctheory.torch`` imports torch)."""
    found = []
    for block in parse_blocks(page, root):
        if not runnable(block) or block.marker == "skip":
            continue
        for name in _IMPORTS.findall(block.code):
            top = "torch" if name.startswith("fctheory.torch") else name.split(".")[0]
            if top in OPTIONAL_EXTRAS and top not in found:
                found.append(top)
        code = re.sub(r"#.*", "", block.code)  # a comment may name fctheory.torch without using it
        if re.search(r"\bfctheory\.torch\b|\bfc\.torch\b", code) and "torch" not in found:
            found.append("torch")
    return found


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.relative_to(ROOT).as_posix())
def test_page_examples_run(page, tmp_path):
    """Every runnable block of one page, in order, in one namespace, in a fresh working directory
    holding a copy of docs/, in a fresh interpreter (an example that changes global state, e.g. the
    budget or warning filters, cannot leak into other tests). A page whose examples import an optional module
    that is not installed (the lean install has no PyTorch) is skipped with the reason."""
    for module in optional_modules_needed(page):
        pytest.importorskip(module, reason=f"needs {module}: pip install 'fctheory[{OPTIONAL_EXTRAS[module]}]'")
    shutil.copytree(DOCS, tmp_path / "docs", ignore=shutil.ignore_patterns("*.png", "*.md"))
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]))
    proc = subprocess.run(
        [sys.executable, __file__, str(page)], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=600
    )
    lines = proc.stdout.strip().splitlines()
    if proc.returncode != 0 or not lines or not lines[-1].startswith("{"):
        pytest.fail(
            f"{page.relative_to(ROOT)}: the example runner died (status {proc.returncode}):\n"
            f"{proc.stdout[-2000:]}\n{proc.stderr[-3000:]}",
            pytrace=False,
        )
    res = json.loads(lines[-1])
    if res["error"]:
        pytest.fail(res["error"], pytrace=False)
    assert res["ran"] > 0
    print(f"{page.name}: {res['ran']} blocks; slowest {res['slowest'][0]:.1f} s ({res['slowest'][1]})")


@pytest.mark.parametrize("block", SKIPPED or [None], ids=lambda b: f"{b.page}:{b.line}" if b else "none")
def test_skipped_example(block):
    """One skipped test per marked block, so that the run's summary counts and lists them."""
    if block is not None:
        pytest.skip(f"doc example {block.where} not run: {block.reason}")


# ---------------------------------------------------------------------------------- the site


def test_every_public_name_is_on_a_reference_page():
    """The top-level names are documented on reference/core.md (rendered or linked), and every
    public sub-package has its own page (which renders its ``__all__``)."""
    import fctheory

    core = (DOCS / "reference" / "core.md").read_text(encoding="utf-8")
    missing = []
    for name in fctheory.__all__:
        obj = getattr(fctheory, name)
        if isinstance(obj, types.ModuleType):  # a sub-package
            if not (DOCS / "reference" / f"{name}.md").exists():
                missing.append(f"fctheory.{name}: no page docs/reference/{name}.md")
        elif not re.search(rf"(::: |\[`)fctheory\.(\w+\.)*{re.escape(name)}\b", core):
            missing.append(f"fctheory.{name}: not on docs/reference/core.md")
    subs = (
        "risk",
        "optima",
        "predictions",
        "trainer",
        "ufm",
        "metrics",
        "diagnosis",
        "nc_diagnosis",
        "sweep",
        "testing",
        "finite_sample",
    )
    for sub in subs + fctheory._LAZY_SUBPACKAGES:  # fctheory.torch: loaded on first access, not in __all__
        try:
            importlib.import_module(f"fctheory.{sub}")
        except ImportError:  # not there, or its optional dependency (PyTorch) is not installed
            continue
        page = DOCS / "reference" / f"{sub}.md"
        if not page.exists() or f"::: fctheory.{sub}" not in page.read_text(encoding="utf-8"):
            missing.append(f"fctheory.{sub}: docs/reference/{sub}.md does not render it")
    assert not missing, "\n".join(missing)


def test_reference_extension_documents_shims_and_roles(tmp_path):
    """The griffe extension of the reference: Sphinx roles become code, and a ``functools.wraps``
    shim that re-defines a public name is documented as the function it wraps."""
    griffe = pytest.importorskip("griffe")
    spec = importlib.util.spec_from_file_location("griffe_extension", DOCS / "reference" / "griffe_extension.py")
    ext = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(ext)
    (tmp_path / "shimmod.py").write_text(
        "import functools\n\n"
        'def f(task, *, lam):\n    """Real docs, see :func:`g` and :class:`~a.b.C`."""\n\n'
        "_f = f\n\n@functools.wraps(_f)\ndef f(*args, **kwargs):\n    return _f(*args, **kwargs)\n",
        encoding="utf-8",
    )
    mod = griffe.load("shimmod", search_paths=[str(tmp_path)], extensions=griffe.Extensions(ext.ReferenceExtension()))
    f = mod["f"]
    assert [p.name for p in f.parameters] == ["task", "lam"]
    assert f.docstring.value == "Real docs, see `g` and `C`."


def test_mkdocs_build_strict(tmp_path):
    """`mkdocs build --strict`: no warning (dead link or anchor, page outside the nav, docstring
    that does not parse)."""
    for mod in ("mkdocs", "material", "mkdocstrings_handlers.python"):
        assert importlib.util.find_spec(mod.split(".")[0]) is not None, (
            f"{mod} missing: the test extra installs the docs tools (pip install -e '.[test]')"
        )
    env = dict(os.environ, NO_MKDOCS_2_WARNING="1", PYTHONPATH=str(ROOT))
    t0 = time.perf_counter()
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "mkdocs",
            "build",
            "--strict",
            "--clean",
            "--config-file",
            str(ROOT / "mkdocs.yml"),
            "--site-dir",
            str(tmp_path / "site"),
        ],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    seconds = time.perf_counter() - t0
    # the warnings, with their continuation lines (e.g. the list of pages missing from the nav)
    log = re.findall(r"^(?:WARNING|ERROR).*(?:\n  .*)*", proc.stdout + proc.stderr, re.M)
    assert proc.returncode == 0, "mkdocs build --strict failed:\n" + "\n".join(log or [proc.stderr[-3000:]])
    print(f"mkdocs build --strict: {seconds:.1f} s")
    # what mkdocstrings rendered: every object named by a `::: X` directive, and every name in the
    # __all__ of a module so named (an object griffe cannot see, e.g. a name loaded lazily or a
    # function shadowed by a module of the same name, would be silently absent)
    missing = []
    for md in sorted((DOCS / "reference").glob("*.md")):
        html = tmp_path / "site" / "reference" / ("" if md.stem == "index" else md.stem) / "index.html"
        ids = set(re.findall(r'id="([\w.]+)"', html.read_text(encoding="utf-8")))
        for target in re.findall(r"^::: (\S+)", md.read_text(encoding="utf-8"), re.M):
            try:
                names = [(target, n) for n in importlib.import_module(target).__all__]
            except ModuleNotFoundError:
                names = [(target.rpartition(".")[0], target.rpartition(".")[2])]
            except ImportError:  # a package whose optional dependency is not installed (fctheory.torch)
                names = []
            except AttributeError:  # a module without __all__: rendered as written
                names = []
            for mod, name in names:
                if not any(re.fullmatch(rf"{re.escape(mod)}(\.\w+)*\.{re.escape(name)}", i) for i in ids):
                    missing.append(f"{md.relative_to(ROOT)}: {mod}.{name} not rendered")
    assert not missing, "\n".join(missing)


if __name__ == "__main__":  # the runner of test_page_examples_run: python tests/docs/test_docs.py PAGE
    page = Path(sys.argv[1])
    os.environ["MPLBACKEND"] = "Agg"
    sys.argv = ["docs-example"]
    print(json.dumps(run_page(page)))
