"""Every option of every command says what it does, in plain words.

One test walks every argparse parser the project ships: ``fctheory`` and each of its sub-commands (sub-parsers and
argument groups included), ``python -m fctheory.torch.lm`` and the ``python -m proofs_check`` commands. Every
option and positional argument needs a help text, and no help text, description or sub-command summary may carry
Sphinx markup (``:class:`...```, ``:func:``, double back-quotes): argparse prints it verbatim.
"""

from __future__ import annotations

import argparse
import importlib
import re

import pytest

from fctheory.cli import build_parser

#: what Sphinx/reST markup looks like in a docstring, and what argparse would print as it stands
SPHINX = re.compile(r":(class|func|meth|mod|attr|data|obj|exc|ref|doc|math):`|``")


class _Captured(Exception):
    """Raised by the patched ``parse_args``: carries the parser a command's ``main`` built."""


def parser_of_main(module: str, monkeypatch) -> argparse.ArgumentParser:
    """The parser that ``module.main(argv)`` builds, caught when it parses (nothing of the command runs)."""

    def grab(self, *args, **kwargs):
        raise _Captured(self)

    main = importlib.import_module(module).main
    with monkeypatch.context() as m:
        m.setattr(argparse.ArgumentParser, "parse_args", grab)
        with pytest.raises(_Captured) as caught:
            main([])
    return caught.value.args[0]


def walk(parser: argparse.ArgumentParser, name: str):
    """(where, text, action) of every description, summary and argument of ``parser`` and its sub-parsers."""
    yield name, parser.description or "", None
    for group in parser._action_groups:
        yield f"{name} [{group.title}]", group.description or "", None
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            summaries = {a.dest: a.help for a in action._choices_actions}
            for sub_name, sub in action.choices.items():
                yield f"{name} {sub_name} (summary)", summaries.get(sub_name) or "", "summary"
                yield from walk(sub, f"{name} {sub_name}")
            continue
        label = "/".join(action.option_strings) or action.dest
        yield f"{name} {label}", action.help, action


def problems(parser: argparse.ArgumentParser, name: str) -> list:
    out = []
    for where, text, action in walk(parser, name):
        if action is not None and (text is None or not str(text).strip()) and text != argparse.SUPPRESS:
            out.append(f"{where}: no help text")
        elif text and text != argparse.SUPPRESS and SPHINX.search(str(text)):
            out.append(f"{where}: Sphinx markup in {str(text)[:80]!r}")
    return out


def test_every_option_of_every_fctheory_command_has_a_plain_help_text():
    parser = build_parser()
    assert problems(parser, "fctheory") == []
    names = {w.split()[1] for w, _, a in walk(parser, "fctheory") if a == "summary"}
    assert {"predict", "optimum", "check", "train", "risk", "diagnose", "diagnose-features", "sweep"} <= names


@pytest.mark.parametrize(
    "module", ["proofs_check.__main__", "proofs_check.partial", "proofs_check.type1_partial", "proofs_check.conjecture"]
)
def test_every_option_of_the_proofs_check_commands_has_a_plain_help_text(module, monkeypatch):
    assert problems(parser_of_main(module, monkeypatch), module) == []


def test_every_option_of_the_language_model_command_has_a_plain_help_text(monkeypatch):
    pytest.importorskip("torch", reason="needs torch: pip install 'fctheory[torch]' (python -m fctheory.torch.lm)")
    parser = parser_of_main("fctheory.torch.lm", monkeypatch)
    assert problems(parser, "python -m fctheory.torch.lm") == []
    assert len([a for a in parser._actions if a.option_strings]) >= 18  # the walk saw the options


def test_the_walk_finds_a_missing_help_text_and_sphinx_markup():
    # the test's own oracle: a parser with each kind of fault, and one without
    p = argparse.ArgumentParser(description="uses :class:`fctheory.Task`")
    p.add_argument("--bare")
    p.add_argument("--marked", help="a ``literal``")
    sub = p.add_subparsers().add_parser("go", help="plain", description="plain")
    sub.add_argument("x", help="")
    found = problems(p, "cmd")
    assert any("cmd: Sphinx markup" in f for f in found)
    assert "cmd --bare: no help text" in found
    assert any(f.startswith("cmd --marked: Sphinx markup") for f in found)
    assert "cmd go x: no help text" in found
    clean = argparse.ArgumentParser(description="plain words")
    clean.add_argument("--n", help="a count")
    assert problems(clean, "ok") == []
