"""Fuzz the command line: every sub-command, every option, bad values on top of a valid command line.

Sub-commands and their options are discovered from ``fctheory.cli.build_parser()`` (the sub-parsers'
choices and their ``_actions``), so a new command or option is covered automatically; a sub-command
without a known-valid minimal command line in ``VALID_ARGV`` fails.

The contract (run in-process through ``fctheory.cli.main(argv)``):

* a user error exits with status 2, and stderr ends with ONE error line
  ``fctheory <command>: error: ...`` naming the option (its flag, its dest, or the parameter it feeds);
  the only other lines allowed are argparse's usage block before it (``usage: ...`` and its indented
  continuation lines). stderr never contains "Traceback";
* a bad token exits 2 — an option the command ignores (``predict type1 --d -1``) is still checked.
  Exit 0 is accepted only where the token is valid there: listed in ``ACCEPT``, any non-empty folder
  name for an output folder (``FOLDER_DESTS``), or a valid extreme (``EXTREME_TOKENS``: 1e300, 10**30,
  for which 0 and 2 are both fine). RuntimeWarnings are failures, as in the API suite;
* an internal error (a bug) exits with status 1 and one line on stderr, no traceback; with the
  top-level ``--debug`` flag (``fctheory --debug COMMAND ...``) the traceback is shown.

Default run: three bad tokens and one extreme per option (rotating); ``-m slow``: every token for
every option. ``python -m tests.fuzz.harness --report`` runs the same cases through ``all_failures``.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import os
import re
import shutil
import time
import warnings
from pathlib import Path

import numpy as np
import pytest

# ``{tmp}`` is a fresh scratch folder per run (also the working directory), ``{weights}`` a small .npz of
# (W, U, Z, mu) for Task.full(2, 2, 2) at Theorem 1's optimum, ``{sweep_spec}`` the TOML below in {tmp}.
VALID_ARGV = {
    "predict": ["predict", "type1", "--nc", "3", "--nw", "6", "--L", "2", "--K", "9", "--lam", "0.01", "--json"],
    "optimum": ["optimum", "--nc", "2", "--sc", "2", "--L", "2", "--K", "3", "--lam", "0.05", "--json"],
    "check": ["check", "--list", "--json", "--only", "thmG-nuclear*"],
    "train": [
        "train",
        "--preset",
        "fig3",
        "--quick",
        "--epochs",
        "1",
        "--backend",
        "numpy",
        "--no-progress",
        "--json",
        "--out",
        "{tmp}/out",
    ],
    "reproduce": [
        "reproduce",
        "--quick",
        "--no-train",
        "--presets",
        "fig3",
        "--backend",
        "numpy",
        "--no-progress",
        "--json",
        "--out",
        "{tmp}/out",
    ],
    "risk": ["risk", "{weights}", "--lam", "0.01", "--json"],
    "diagnose": ["diagnose", "{weights}", "--lam-W", "0.01", "--lam-U", "0.01", "--method", "exact", "--json"],
    "diagnose-features": ["diagnose-features", "{features}", "--lam-W", "0.01", "--lam-H", "0.01", "--json"],
    "sweep": ["sweep", "{sweep_spec}", "--output", "{tmp}/o", "--workers", "1", "--no-progress", "--json"],
}

# {sweep_spec}: a three-point sweep of lambda_trivial (milliseconds)
SWEEP_SPEC = """target = "lambda_trivial"
workers = 1
[fixed]
n_c = 3
s_c = 4
L = 2
[grid]
K = [2, 4, 9]
"""

# Bad tokens fed to every option that takes a value ({missing}: a file path that does not exist).
BAD_TOKENS = ["nan", "-1", "abc", "1e400", "", "{missing}", "True", "-inf"]
INT_TOKENS = ["1.5", "2**70"]  # also bad for options parsed as integers
# Valid but extreme values (huge integers, tiny/huge reals): exit 0 or 2, never a traceback, exit 1 or a hang.
EXTREME_TOKENS = {int: ["1" + "0" * 30], float: ["1e300", "1e-300"]}

# (command, dest) -> tokens that are valid values there (exit 0 or 2 both accepted), with the reason.
# Output folders (dest "out"/"output" in any command): every token but "" is a valid (creatable) folder name.
FOLDER_DESTS = {"out", "output"}
ACCEPT = {
    ("risk", "max_seconds"): ({"1e400"}, "inf means no time limit"),
    ("check", "only"): ({"-1", ""}, "a pattern matching check ids ('-1' does; '' means no filter)"),
}

# (command, dest) -> extra words an error line may use to name the option (the parameter it feeds)
NAMES = {
    ("predict", "nc"): ("n_c",),
    ("predict", "sc"): ("s_c",),
    ("predict", "nw"): ("n_w",),
    ("risk", "nc"): ("n_c",),
    ("risk", "task_seed"): ("seed",),
    ("risk", "weights"): ("path",),
    ("check", "only"): ("only",),
    ("diagnose", "weights"): ("path",),
    ("sweep", "spec"): ("path",),
}

REPO = Path(__file__).resolve().parents[2]
USAGE_LINE = re.compile(r"^(usage: |\s+\S)")
ERROR_LINE = re.compile(r"^fctheory( [\w-]+)?: error: ")


# ---------------------------------------------------------------------------------------- plumbing
def _parser():
    from fctheory.cli import build_parser

    return build_parser()


def subcommands() -> dict:
    """name -> sub-parser, from the top-level parser."""
    for a in _parser()._actions:
        if isinstance(a, argparse._SubParsersAction):
            return dict(a.choices)
    return {}


def options(sub: argparse.ArgumentParser) -> list:
    """The sub-parser's arguments (help/version excluded)."""
    return [a for a in sub._actions if not isinstance(a, (argparse._HelpAction, argparse._VersionAction))]


def label(a) -> str:
    return a.option_strings[-1] if a.option_strings else a.dest


def _harness():
    """tests/fuzz/harness.py (imported lazily: the harness imports this module for its CLI table)."""
    from tests.fuzz import harness

    return harness


@pytest.fixture(autouse=True, scope="module")
def _scratch_under_tmp_path(tmp_path_factory):
    """Scratch folders of the CLI runs go under pytest's temporary folder, never the system temp folder."""
    _harness().set_scratch_root(tmp_path_factory.mktemp("fuzz-cli"))


_WEIGHTS = {}


def weights_file() -> str:
    path = _WEIGHTS.get("path")
    if path is None or not os.path.exists(path):
        import fctheory as fc

        task = fc.Task.full(2, 2, 2)
        W, U = fc.type1_configuration(task, 3, lam=0.01, seed=0)
        folder = _harness().scratch_dir("cli-weights-")
        path = os.path.join(folder, "weights.npz")
        np.savez(path, W=W, U=U, Z=task.Z, mu=task.mu)
        _WEIGHTS["path"] = path
    return path


def fill(argv, tmp) -> list:
    if any("{sweep_spec}" in t for t in argv) and os.path.isdir(tmp):
        Path(tmp, "sweep.toml").write_text(SWEEP_SPEC)
    if any("{features}" in t for t in argv) and os.path.isdir(tmp):
        # {features}: features H (12 x 3) with labels y (3 classes) and a last layer W, for diagnose-features
        rng = np.random.default_rng(0)
        np.savez(
            Path(tmp, "features.npz"),
            H=rng.standard_normal((12, 3)),
            y=np.arange(12) % 3,
            W=rng.standard_normal((3, 3)),
        )
    return [
        t.replace("{tmp}", str(tmp))
        .replace("{features}", str(Path(tmp) / "features.npz"))
        .replace("{weights}", weights_file())
        .replace("{sweep_spec}", str(Path(tmp) / "sweep.toml"))
        .replace("{missing}", str(Path(tmp) / "missing_folder" / "missing.npz"))
        for t in argv
    ]


class CliResult:
    def __init__(self, code, out, err, seconds, exc=None, warns=()):
        self.code, self.out, self.err, self.seconds, self.exc = code, out, err, seconds, exc
        self.warnings = list(warns)


def run_cli(argv, *, timeout=120.0) -> CliResult:
    """``fctheory.cli.main(argv)`` in-process in a fresh scratch folder; never raises."""
    H = _harness()
    from fctheory.cli import main

    tmp = H.scratch_dir("cli-")
    old = os.getcwd()
    out, err = io.StringIO(), io.StringIO()
    t0 = time.perf_counter()
    exc = None
    caught = []
    try:
        os.chdir(tmp)
        # RuntimeWarnings are recorded (and reported), the same under pytest's error filter and outside it
        with (
            warnings.catch_warnings(record=True) as caught,
            contextlib.redirect_stdout(out),
            contextlib.redirect_stderr(err),
            H.time_limit(timeout),
        ):
            warnings.simplefilter("always")
            try:
                code = main(fill(argv, tmp))
            except SystemExit as e:
                code = e.code
        code = 0 if code is None else code
    except H.CallTimeout:
        code = "timeout"
    except BaseException as e:  # noqa: BLE001 - an uncaught exception is what we report
        code, exc = "raised", e
    finally:
        os.chdir(old)
        shutil.rmtree(tmp, ignore_errors=True)
    warns = [
        f"{w.category.__name__}: {w.message} ({os.path.relpath(w.filename, REPO)}:{w.lineno})"
        for w in caught or ()
        if issubclass(w.category, RuntimeWarning)
    ]
    return CliResult(code, out.getvalue(), err.getvalue(), time.perf_counter() - t0, exc, warns)


def names_option(line: str, cmd: str, a) -> bool:
    words = set(a.option_strings) | {a.dest, a.dest.replace("_", "-")} | set(NAMES.get((cmd, a.dest), ()))
    words |= {o.lstrip("-") for o in a.option_strings}
    return any(re.search(rf"(?<![\w-]){re.escape(w)}(?![\w])", line) for w in words if w)


def stderr_problem(err: str) -> str | None:
    """None when stderr is argparse's usage block (optional) followed by exactly one error line."""
    if "Traceback" in err:
        return "stderr contains a traceback"
    lines = [ln for ln in err.splitlines() if ln.strip()]
    if not lines:
        return "stderr is empty"
    if not ERROR_LINE.match(lines[-1]):
        return f"the last stderr line is not 'fctheory <command>: error: ...': {lines[-1][:120]!r}"
    extra = [ln for ln in lines[:-1] if not USAGE_LINE.match(ln)]
    if extra:
        return f"stderr has {len(extra)} line(s) besides usage and the error line: {extra[0][:120]!r}"
    return None


def with_value(cmd: str, a, token: str) -> list:
    """VALID_ARGV[cmd] with option ``a`` set to ``token`` (replacing its value, or appended)."""
    argv = list(VALID_ARGV[cmd])
    if a.option_strings:
        for i, t in enumerate(argv):
            if t in a.option_strings and i + 1 < len(argv):
                argv[i + 1] = token
                return argv
        return argv + [a.option_strings[-1], token]
    # positional: replace the token the valid command line gives it
    sub = subcommands()[cmd]
    parsed = sub.parse_args(fill(argv[1:], "/tmp/x"))
    value = getattr(parsed, a.dest)
    filled = fill(argv, "/tmp/x")
    for i, t in enumerate(filled):
        if i > 0 and t == str(value) and not filled[i - 1].startswith("-"):
            argv[i] = token
            return argv
    return argv + [token]


def cases(cmd: str, mode: str) -> list:
    """(option, token) pairs for one sub-command; fast mode: three tokens per option, rotating.

    ``"=abc"`` marks an explicit value given to a flag; a leading ``~`` marks a valid extreme.
    """
    out = []
    sub = subcommands()[cmd]
    for j, a in enumerate(options(sub)):
        if a.nargs == 0:  # flags: an explicit value is an error
            out.append((a, "=abc"))
            continue
        toks = list(BAD_TOKENS) + (INT_TOKENS if a.type is int else [])
        if a.choices:
            toks += [str(c).upper() for c in a.choices if str(c).upper() not in map(str, a.choices)][:1]
        if mode == "fast":
            toks = [toks[(3 * j + k) % len(toks)] for k in range(3)]
        out += [(a, t) for t in toks]
        ext = EXTREME_TOKENS.get(a.type, [])
        out += [(a, "~" + t) for t in (ext if mode == "full" else ext[:1])]
    return out


def check_case(cmd: str, a, token: str) -> list:
    """Failures (as strings) of one bad token for one option."""
    accepted, _why = ACCEPT.get((cmd, a.dest), (set(), ""))
    if a.dest in FOLDER_DESTS:
        accepted = set(BAD_TOKENS) - {""}
    expected = "2"
    if token.startswith("="):
        argv = list(VALID_ARGV[cmd]) + [f"{a.option_strings[-1]}{token}"]
    elif token.startswith("~"):  # a valid extreme: 0 or 2 are both fine
        token = token[1:]
        argv = with_value(cmd, a, token)
        accepted, expected = {token}, "0 or 2"
    else:
        argv = with_value(cmd, a, token)
    r = run_cli(argv)
    fails = []
    if r.code == "timeout":
        return ["did not finish within 120 s"]
    if r.code == "raised":
        return [f"main() raised {type(r.exc).__name__}: {str(r.exc)[:160]} (an uncaught exception prints a traceback)"]
    if "Traceback" in r.err or "Traceback" in r.out:
        fails.append("printed a traceback")
    if r.warnings:
        fails.append(f"emitted {r.warnings[0]}")
    if r.code == 0:
        if token not in accepted:
            fails.append("exit 0: accepted the bad value (expected exit 2 naming the option)")
    elif r.code == 2:
        problem = stderr_problem(r.err)
        if problem:
            fails.append(f"exit 2 but {problem}")
        else:
            last = [ln for ln in r.err.splitlines() if ln.strip()][-1]
            # argparse reads "-inf" given to an optional-value option (nargs="?") as an unknown flag
            generic = a.nargs == "?" and token.startswith("-") and "unrecognized arguments" in last
            if not generic and not names_option(last, cmd, a):
                fails.append(f"the error line does not name {label(a)}: {last[:160]!r}")
    else:
        last = ([ln for ln in r.err.splitlines() if ln.strip()] or [""])[-1]
        fails.append(f"exit {r.code} (expected {expected}): {last[:160]!r}")
    return fails


def all_failures(full: bool = False) -> list:
    """Every CLI failure as (key, option, token, what) — used by ``python -m tests.fuzz.harness --report``."""
    fails = []
    subs = subcommands()
    for cmd in subs:
        if cmd not in VALID_ARGV:
            fails.append((f"cli {cmd}", "", "", "no entry in VALID_ARGV of tests/fuzz/test_fuzz_cli.py"))
            continue
        r = run_cli(VALID_ARGV[cmd])
        if r.code != 0:
            fails.append(
                (f"cli {cmd}", "", "valid argv", f"exit {r.code}: {(r.err.strip().splitlines() or [''])[-1][:160]}")
            )
            continue
        for a, tok in cases(cmd, "full" if full else "fast"):
            for w in check_case(cmd, a, tok):
                fails.append((f"cli {cmd}", label(a), repr(tok), w))
    for cmd in subs:
        if cmd in VALID_ARGV:
            for what in internal_error_failures(cmd):
                fails.append((f"cli {cmd}", "", "forced RuntimeError", what))
    return fails


@contextlib.contextmanager
def forced_internal_error(cmd: str):
    """Make sub-command ``cmd`` raise RuntimeError (as a bug would) by wrapping build_parser."""
    import fctheory.cli as cli

    original = cli.build_parser

    def boom(args):
        raise RuntimeError("forced internal error for the fuzz suite")

    def patched(*args, **kwargs):
        parser = original(*args, **kwargs)
        for a in parser._actions:
            if isinstance(a, argparse._SubParsersAction):
                a.choices[cmd].set_defaults(func=boom)
        return parser

    cli.build_parser = patched
    try:
        yield
    finally:
        cli.build_parser = original


def internal_error_failures(cmd: str) -> list:
    fails = []
    with forced_internal_error(cmd):
        r = run_cli(VALID_ARGV[cmd])
        d = run_cli(["--debug"] + VALID_ARGV[cmd])
    if r.code == "raised":
        fails.append(f"without --debug: main() raised {type(r.exc).__name__} (expected exit 1, one line, no traceback)")
    else:
        if r.code != 1:
            fails.append(f"without --debug: exit {r.code} (expected 1)")
        lines = [ln for ln in r.err.splitlines() if ln.strip()]
        if "Traceback" in r.err:
            fails.append("without --debug: stderr shows a traceback")
        elif len(lines) != 1:
            fails.append(f"without --debug: stderr has {len(lines)} lines (expected one)")
    if d.code == "raised":
        if not isinstance(d.exc, RuntimeError):
            fails.append(f"with --debug: main() raised {type(d.exc).__name__}: {str(d.exc)[:120]}")
    elif "Traceback" not in d.err or "RuntimeError" not in d.err:
        last = ([ln for ln in d.err.splitlines() if ln.strip()] or [""])[-1]
        fails.append(f"with --debug: no traceback on stderr (exit {d.code}): {last[:120]!r}")
    return fails


# ------------------------------------------------------------------------------------------- tests
SUBCOMMANDS = sorted(subcommands())


def test_every_subcommand_has_a_valid_command_line():
    missing = [c for c in SUBCOMMANDS if c not in VALID_ARGV]
    assert not missing, f"sub-commands without an entry in VALID_ARGV (tests/fuzz/test_fuzz_cli.py): {missing}"
    assert not set(VALID_ARGV) - set(SUBCOMMANDS), (
        f"VALID_ARGV names unknown commands {set(VALID_ARGV) - set(SUBCOMMANDS)}"
    )


@pytest.mark.parametrize("cmd", SUBCOMMANDS)
def test_valid_command_line_exits_0(cmd):
    if cmd not in VALID_ARGV:
        pytest.skip("no VALID_ARGV entry (reported by test_every_subcommand_has_a_valid_command_line)")
    r = run_cli(VALID_ARGV[cmd])
    assert r.code == 0, f"{VALID_ARGV[cmd]}: exit {r.code}\n{r.err[-2000:]}{r.exc!r}"
    assert "Traceback" not in r.err


def _params(mode):
    out = []
    for cmd in SUBCOMMANDS:
        if cmd in VALID_ARGV:
            opts = {label(a) for a in options(subcommands()[cmd])}
            out += [pytest.param(cmd, o, id=f"{cmd} {o}") for o in sorted(opts)]
    return out


def _run_option(cmd, opt, mode):
    fails = []
    for a, tok in cases(cmd, mode):
        if label(a) == opt:
            fails += [f"fctheory {cmd} {opt} {tok!r}: {w}" for w in check_case(cmd, a, tok)]
    assert not fails, "\n".join(fails)


@pytest.mark.parametrize("cmd,opt", _params("fast"))
def test_bad_option_values(cmd, opt):
    _run_option(cmd, opt, "fast")


@pytest.mark.slow
@pytest.mark.parametrize("cmd,opt", _params("full"))
def test_all_bad_option_values(cmd, opt):
    _run_option(cmd, opt, "full")


@pytest.mark.parametrize("cmd", SUBCOMMANDS)
def test_internal_error_exit_1_and_debug_traceback(cmd):
    """A bug exits 1 with one line; ``fctheory --debug ...`` shows the traceback."""
    if cmd not in VALID_ARGV:
        pytest.skip("no VALID_ARGV entry (reported by test_every_subcommand_has_a_valid_command_line)")
    fails = internal_error_failures(cmd)
    assert not fails, "\n".join(fails)


def test_stderr_contract_checker():
    """The checker accepts argparse's usage + error and refuses tracebacks and extra lines."""
    ok = "usage: fctheory risk [-h] [--nc NC]\n                     weights\nfctheory risk: error: argument --nc: invalid int value: 'abc'\n"
    assert stderr_problem(ok) is None
    assert stderr_problem("fctheory predict: error: lam=nan is invalid: must be finite\n") is None
    assert stderr_problem("Traceback (most recent call last):\n  ...\nfctheory x: error: y\n")
    assert stderr_problem("warning: something\nfctheory x: error: y\n")
    assert stderr_problem("fctheory x: error: y\nmore\n")
