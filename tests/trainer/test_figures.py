"""fctheory.trainer.figures: the PCA and norm-by-rank figures of a run are written as PNG files."""

import pytest

import fctheory as fc
from fctheory.trainer.figures import plot_norm_by_rank, save_figures

PNG = b"\x89PNG\r\n\x1a\n"


@pytest.fixture(scope="module")
def run():
    pytest.importorskip("matplotlib")
    return fc.train(fc.Task.full(3, 2, 2), n_spl=2, d=4, epochs=3, batch=6, seed=0, backend="numpy", dtype="float64")


def test_save_figures_writes_every_figure_as_png(run, tmp_path):
    paths = save_figures(run, str(tmp_path), prefix="r-")
    assert paths and all(str(tmp_path) in str(p) for p in paths.values())
    for p in paths.values():
        assert open(p, "rb").read(8) == PNG


def test_norm_by_rank_figure_is_written(run, tmp_path):
    out = tmp_path / "n.png"
    plot_norm_by_rank(run, str(out))
    assert out.read_bytes()[:8] == PNG and out.stat().st_size > 2000
