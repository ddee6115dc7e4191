"""fctheory._plot: pyplot is loaded with a non-interactive backend."""

import pytest

from fctheory._plot import pyplot


def test_pyplot_is_matplotlibs_pyplot_and_draws_to_a_file(tmp_path):
    pytest.importorskip("matplotlib")
    plt = pyplot()
    assert plt.get_backend().lower() == "agg"
    fig, ax = plt.subplots()
    ax.plot([0, 1], [1, 0])
    fig.savefig(tmp_path / "p.png")
    plt.close(fig)
    assert (tmp_path / "p.png").stat().st_size > 1000
