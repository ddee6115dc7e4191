"""save_figures refuses a folder that cannot exist, naming the parameter, before anything is drawn."""

from __future__ import annotations

import pytest

import fctheory as fc
from fctheory.trainer.figures import save_figures


@pytest.fixture(scope="module")
def run():
    return fc.train(fc.Task.full(2, 2, 2), n_spl=2, d=3, epochs=1, batch=4, backend="numpy", dtype="float64",
                    n_test=1, measure=False, progress=False)  # fmt: skip


def test_a_folder_under_a_regular_file_is_a_named_error(run, tmp_path):
    (tmp_path / "existing_file").write_text("not a folder")
    with pytest.raises(fc.FCTheoryError, match=r"^folder=.*existing_file.*is not a folder"):
        save_figures(run, tmp_path / "existing_file" / "sub")
    assert (tmp_path / "existing_file").read_text() == "not a folder"


def test_an_existing_regular_file_is_a_named_error(run, tmp_path):
    (tmp_path / "figures").write_text("")
    with pytest.raises(fc.FCTheoryError, match=r"^folder=.*a file of that name exists"):
        save_figures(run, tmp_path / "figures")


def test_figures_are_written_into_a_new_folder(run, tmp_path):
    pytest.importorskip("matplotlib")
    paths = save_figures(run, tmp_path / "new" / "figures", prefix="t_")
    assert sorted(paths) == ["norm_by_rank", "pca_U", "pca_W"]
    assert all(
        p.endswith(".png") and (tmp_path / "new" / "figures" / p.rsplit("/", 1)[1]).stat().st_size
        for p in paths.values()
    )
