"""fctheory.trainer.reproduce: the reproduce report (quick runs, existing checkpoints only) and the acceptance
thresholds of the paper's figures."""

import json

import numpy as np

from fctheory.cli import main
from fctheory.trainer import get_preset
from fctheory.trainer.reproduce import acceptance


def test_reproduce_quick_writes_the_report(tmp_path, capsys):
    # reuse checkpoints so the report is built without retraining where possible
    assert main(["reproduce", "--quick", "--json", "--out", str(tmp_path), "--presets", "fig3,fig4c"]) == 0
    res = json.loads(capsys.readouterr().out)["results"]
    assert all(all(v.values()) for v in res["acceptance"].values())
    text = (tmp_path / "report.md").read_text()
    assert "### fig3 (quick)" in text and "### fig4c (quick)" in text and "Theorem 3" in text
    assert "![fig4c pca_U](fig4c-quick_pca_U.png)" in text
    assert (tmp_path / "fig4c-quick_norm_by_rank.png").exists()


def test_reproduce_no_train_reports_existing_checkpoints_only(tmp_path, capsys):
    from fctheory import train

    p = get_preset("fig4c", quick=True)
    kw = p.train_kwargs()
    kw["epochs"] = 3  # a partial run of the quick preset
    train(p.task(), n_spl=p.n_spl, d=p.d, **kw, checkpoint=tmp_path / "fig4c-quick.ckpt.npz", measure=False)
    kw["epochs"] = p.epochs
    assert (
        main(["reproduce", "--quick", "--no-train", "--json", "--out", str(tmp_path), "--presets", "fig3,fig4c"]) == 0
    )
    res = json.loads(capsys.readouterr().out)["results"]
    assert list(res["acceptance"]) == ["fig4c"]
    assert res["acceptance"]["fig4c"]["training completed all epochs"] is False
    text = (tmp_path / "report.md").read_text()
    assert "Not run (no checkpoint" in text and "3/100 epochs" in text
    assert not (tmp_path / "fig3-quick.ckpt.npz").exists()  # nothing was trained


def test_acceptance_criteria_thresholds():
    """The acceptance function encodes the reproduction thresholds (checked on synthetic measurements)."""
    from types import SimpleNamespace as NS

    m = NS(test_acc=1.0, W_norm_mean=1.40, pca_W=np.array([34.0, 35.5, 0.5]), U_norm_mean=0.1)
    run = NS(measurements=m, epochs_done=1200, config=NS(epochs=1200))
    assert all(acceptance("fig3", run).values())
    m.pca_W = np.array([34.0, 36.0, 0.5])  # 36/34.835 − 1 = 3.3% > 3%
    assert not acceptance("fig3", run)["σ₁, σ₂ of W within 3% of √(τ/2) = 34.835"]
    m.test_acc = 0.71
    assert not acceptance("fig4b", run)["final test accuracy ≤ 70%"]
    m.U_norm_mean = 0.0975470857 * 1.06
    assert not acceptance("fig4c", run)["mean ‖u‖ within 5% of τ*/√(KL) = 0.09755"]
