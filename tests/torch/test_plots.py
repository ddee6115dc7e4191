"""``fctheory.torch.plots.plot_history``: one panel per metric over the epochs, the UFM prediction drawn as a
horizontal line at the value the table predicts, "(UFM: 0)" in the title of the metrics that vanish at the
optimum, and a PNG at the requested path."""

import numpy as np
import pytest

pytest.importorskip("torch", reason="needs torch: pip install 'fctheory[torch]'")
pd = pytest.importorskip("pandas")
pytest.importorskip("matplotlib")
import matplotlib.pyplot as real_pyplot  # noqa: E402

from fctheory.torch import plots  # noqa: E402

PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"


def _table(epochs=4):
    e = np.arange(epochs)
    return pd.DataFrame(
        {
            "epoch": e,
            "nc1": 1.0 / (e + 1),
            "nc1_trace_ratio": 0.5 / (e + 1),
            "cdnv": 0.1 / (e + 1),
            "nc2": np.r_[0.0, 0.3 / (e[1:] + 1)],  # a zero: not drawable on a log scale
            "nc2_W": 0.2 / (e + 1),
            "nc3": 0.4 / (e + 1),
            "nc4": np.r_[0.5, 0.25, 0.0, 0.0][:epochs],
            "dist_W_gram": 0.7 / (e + 1),
            "dist_means_gram": 0.6 / (e + 1),
            "W_norm_sq": 2.0 + 0.1 * e,
            "ufm_W_norm_sq": np.r_[9.0, 9.0, 9.0, 2.5][:epochs],  # the line uses the last epoch's value
            "H_norm_sq_per_sample": 3.0 + 0.5 * e,
            "H_norm_sq_ratio": 1.5 + 0.25 * e,
            "ufm_H_norm_sq": 1234.0,
        }
    )


def _draw(df, folder, **kw):
    """plot_history's path and figure (the module closes its figure; the stand-in keeps it open)."""
    figures = []

    class _KeepFigures:
        def __getattr__(self, name):
            return getattr(real_pyplot, name)

        def close(self, fig):
            figures.append(fig)

    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(plots, "pyplot", lambda *a, **k: _KeepFigures())
        path = plots.plot_history(df, str(folder / "history.png"), **kw)
    return path, figures[-1]


@pytest.fixture(scope="module")
def drawn(tmp_path_factory):
    """The figure of the full table, drawn once (with its table) for the tests that only read it."""
    df = _table()
    _, fig = _draw(df, tmp_path_factory.mktemp("plots"), title="run 7")
    yield df, fig
    real_pyplot.close(fig)


@pytest.fixture
def draw(tmp_path):
    figures = []

    def run(df):
        fig = _draw(df, tmp_path)[1]
        figures.append(fig)
        return fig

    yield run
    for fig in figures:
        real_pyplot.close(fig)


def _by_title(fig):
    return {ax.get_title(): ax for ax in fig.axes if ax.get_visible()}


def _ufm_line(ax):
    lines = [ln for ln in ax.get_lines() if ln.get_label() == "UFM optimum"]
    assert len(lines) == 1
    return lines[0]


def test_writes_a_png_at_the_path(tmp_path):
    path = plots.plot_history(_table(), str(tmp_path / "h.png"))
    assert path == str(tmp_path / "h.png")
    with open(path, "rb") as f:
        assert f.read(8) == PNG_SIGNATURE
    assert sorted(p.name for p in tmp_path.iterdir()) == ["h.png"]


def test_one_visible_panel_per_metric_group(drawn):
    _, fig = drawn
    assert len(fig.axes) == 8
    assert len(_by_title(fig)) == 8


def test_W_norm_line_is_the_last_predicted_value(drawn):
    _, fig = drawn
    ax = _by_title(fig)["‖W‖²"]
    np.testing.assert_array_equal(_ufm_line(ax).get_ydata(), [2.5, 2.5])


def test_H_norm_line_is_observed_per_sample_over_observed_ratio(drawn):
    df, fig = drawn
    ax = _by_title(fig)["‖H‖²/N"]
    expected = (3.0 + 0.5 * 3) / (1.5 + 0.25 * 3)  # last epoch: per-sample value / ratio = 4.5 / 2.25 = 2
    np.testing.assert_allclose(_ufm_line(ax).get_ydata(), [expected, expected], rtol=0, atol=0)
    assert "ufm_H_per_sample" not in df  # the caller's table is not modified


def test_vanishing_metrics_say_ufm_zero_and_have_no_line(drawn):
    _, fig = drawn
    titles = _by_title(fig)
    zero = [t for t in titles if t.endswith(" (UFM: 0)")]
    assert len(zero) == 6
    for t in zero:
        assert all(ln.get_label() != "UFM optimum" for ln in titles[t].get_lines())


def test_plotted_curves_are_the_table_columns(drawn):
    df, fig = drawn
    ax = _by_title(fig)["NC1 (Papyan; tr Σ_W/tr Σ_B) (UFM: 0)"]
    curves = {ln.get_label(): ln for ln in ax.get_lines()}
    assert set(curves) == {"nc1", "nc1_trace_ratio"}
    np.testing.assert_array_equal(curves["nc1"].get_xdata(), df["epoch"])
    np.testing.assert_array_equal(curves["nc1"].get_ydata(), df["nc1"])
    assert ax.get_yscale() == "log"


def test_non_positive_values_are_masked_on_log_panels(drawn):
    _, fig = drawn
    ax = _by_title(fig)["NC2: distance to a simplex ETF (means, W) (UFM: 0)"]
    y = {ln.get_label(): np.asarray(ln.get_ydata(), float) for ln in ax.get_lines()}["nc2"]
    assert np.isnan(y[0]) and np.all(np.isfinite(y[1:]))


def test_linear_panels_keep_zeros(drawn):
    _, fig = drawn
    ax = _by_title(fig)["NC4: classifier ≠ nearest class mean (UFM: 0)"]
    assert ax.get_yscale() == "linear"
    np.testing.assert_array_equal(ax.get_lines()[0].get_ydata(), [0.5, 0.25, 0.0, 0.0])


def test_panels_without_data_are_hidden(draw):
    # missing columns and an all-NaN column leave their panels empty, hence hidden
    df = _table()[["epoch", "W_norm_sq", "ufm_W_norm_sq", "cdnv"]].copy()
    df["cdnv"] = np.nan
    fig = draw(df)
    assert list(_by_title(fig)) == ["‖W‖²"]


def test_title_becomes_the_suptitle(drawn):
    _, fig = drawn
    assert fig._suptitle is not None and fig._suptitle.get_text() == "run 7"
