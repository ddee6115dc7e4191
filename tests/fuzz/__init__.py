"""The project's own fuzz suite: discovery of the public API, bad-value generation and valid examples.

``harness.py`` discovers every public callable and draws bad values per declared parameter kind;
``examples_<area>.py`` hold one fast valid call per callable (see docs/api.md, "Domains and errors",
for the format). The tests are tests/fuzz/test_fuzz.py and tests/fuzz/test_fuzz_cli.py.
"""
