"""Presets and the command line: every --quick preset reaches 100% training accuracy."""

import json

import numpy as np
import pytest

from fctheory.cli import main
from fctheory.trainer import PRESETS, get_preset


def test_full_presets_match_the_notebooks():
    """Derivations A.2/A.4 (the garbled table read as: weight decays 1e-3, fig4c λ_W = 0)."""
    for name in ("fig3", "fig4a", "fig4b", "fig4c"):
        p = get_preset(name)
        assert (p.n_c, p.s_c, p.L, p.K, p.d, p.lr, p.batch, p.lam_U, p.init_scale) == (
            3,
            400,
            15,
            1000,
            100,
            0.1,
            100,
            1e-3,
            1e-3,
        )
    assert [get_preset(n).epochs for n in ("fig3", "fig4a", "fig4b", "fig4c")] == [1200, 10, 3000, 500]
    assert [get_preset(n).n_spl for n in ("fig3", "fig4a", "fig4b", "fig4c")] == [5, 500, 5, 5]
    assert get_preset("fig4c").layernorm and get_preset("fig4c").lam_W == 0
    assert get_preset("fig3").mu == "uniform" and get_preset("fig4b").mu == "zipf"
    k50 = get_preset("k50")
    assert (k50.K, k50.n_spl, k50.mu) == (50, 100, "uniform")
    t = get_preset("fig3").task()
    assert (t.K, t.n_w) == (1000, 1200) and np.array_equal(t.Z, get_preset("fig3").task().Z)


def test_every_quick_preset_reaches_full_train_accuracy_via_cli(tmp_path, capsys):
    for name in PRESETS:
        assert main(["train", "--preset", name, "--quick", "--json", "--out", str(tmp_path)]) == 0
        out = json.loads(capsys.readouterr().out)["results"]  # the CLI's JSON schema: results under "results"
        assert out["measurements"]["train_acc"] == 1.0, name
        assert out["acceptance"] == {"train accuracy = 100%": True}
        assert (tmp_path / f"{name}-quick.ckpt.npz").exists()
        assert (tmp_path / f"{name}-quick_pca_W.png").stat().st_size > 1000
    # a second call reuses the finished checkpoint (no training)
    assert main(["train", "--preset", "k50", "--quick", "--json", "--out", str(tmp_path)]) == 0
    assert json.loads(capsys.readouterr().out)["results"]["epochs_done"] == get_preset("k50", quick=True).epochs


def test_cli_errors_exit_2(capsys):
    assert main(["reproduce", "--quick", "--presets", "fig9"]) == 2
    assert "--presets" in capsys.readouterr().err
    with pytest.raises(SystemExit) as e:
        main(["train", "--preset", "fig9"])
    assert e.value.code == 2
