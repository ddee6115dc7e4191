"""fctheory._progress: whether a bar is shown, and the bar itself."""

import io
import sys

from fctheory._progress import progress_bar, show_by_default


def test_a_bar_is_shown_when_asked_and_by_default_only_on_a_terminal(monkeypatch):
    assert show_by_default(True) and not show_by_default(False)
    monkeypatch.setattr(sys, "stderr", io.StringIO())  # not a terminal: no bar in logs and tests
    assert not show_by_default(None)

    class Tty(io.StringIO):
        def isatty(self):
            return True

    monkeypatch.setattr(sys, "stderr", Tty())
    assert show_by_default(None)


def test_progress_bar_counts_its_steps_or_is_none():
    assert progress_bar(False, 3, "x", "d") is None
    bar = progress_bar(True, 3, "sample", "demo")
    bar.update()
    bar.update()
    assert bar.n == 2 and bar.total == 3
    bar.close()
