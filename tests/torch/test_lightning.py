"""NCMonitorCallback: a Lightning fit gives the table of an NCMonitor driven by hand through the same seeded
training, logs the metrics, reads λ_W from the optimizer and writes the table when fitting ends."""

import ast
import logging
import math
import tempfile
from pathlib import Path

import numpy as np
import pytest

torch = pytest.importorskip("torch", reason="needs torch: pip install 'fctheory[torch]'")
pytest.importorskip("lightning", reason="needs lightning: pip install 'fctheory[lightning]'")
pd = pytest.importorskip("pandas")
pytest.importorskip("pyarrow")

import lightning.pytorch as pl  # noqa: E402

import fctheory.torch  # noqa: E402
from fctheory import FCTheoryError  # noqa: E402
from fctheory.torch import NCMonitor  # noqa: E402
from fctheory.torch.lightning import NCMonitorCallback  # noqa: E402

K, D_IN, D, N, BATCH, EPOCHS = 3, 5, 4, 60, 20, 3
LAM_W, LAM_H = 1e-2, 1e-3

logging.getLogger("lightning.pytorch").setLevel(logging.ERROR)


class Net(pl.LightningModule):
    def __init__(self, opt="sgd"):
        super().__init__()
        self.body = torch.nn.Sequential(torch.nn.Linear(D_IN, 8), torch.nn.ReLU(), torch.nn.Linear(8, D))
        self.fc = torch.nn.Linear(D, K)
        self.opt = opt

    def training_step(self, batch, batch_idx):
        x, y = batch
        return torch.nn.functional.cross_entropy(self.fc(self.body(x)), y)

    def configure_optimizers(self):
        groups = [{"params": self.body.parameters()}, {"params": self.fc.parameters(), "weight_decay": LAM_W}]
        if self.opt == "adamw":
            return torch.optim.AdamW(groups, lr=1e-2)
        return torch.optim.SGD(groups, lr=0.1, momentum=0.9)


def _loader(dtype=torch.float32):
    rng = np.random.default_rng(0)
    y = np.arange(N) % K
    X = 3.0 * rng.standard_normal((K, D_IN))[y] + rng.standard_normal((N, D_IN))
    ds = torch.utils.data.TensorDataset(torch.as_tensor(X, dtype=dtype), torch.as_tensor(y))
    return torch.utils.data.DataLoader(ds, batch_size=BATCH, shuffle=False)


def _fit(tmp_path, callback, opt="sgd"):
    torch.manual_seed(0)
    net = Net(opt)
    trainer = pl.Trainer(
        max_epochs=EPOCHS,
        callbacks=[callback],
        accelerator="cpu",
        devices=1,
        logger=pl.loggers.CSVLogger(str(tmp_path), name="logs"),
        enable_checkpointing=False,
        enable_progress_bar=False,
        enable_model_summary=False,
        num_sanity_val_steps=0,
        default_root_dir=str(tmp_path),
        log_every_n_steps=1,
    )
    trainer.fit(net, _loader())
    return trainer


def _by_hand():
    """The same training written out: forward, zero_grad, backward, step, with the monitor hooked."""
    torch.manual_seed(0)
    net = Net()
    opt = net.configure_optimizers()
    mon = NCMonitor(K, lam_W=LAM_W, lam_H=LAM_H, classifier=net.fc, progress=False).attach(net.body)
    net.train()
    for _ in range(EPOCHS):
        mon.begin_epoch()
        for i, (x, y) in enumerate(_loader()):
            with mon.batch(y):
                loss = net.training_step((x, y), i)
            opt.zero_grad()
            loss.backward()
            opt.step()
        mon.end_epoch()
    return mon.table()


@pytest.fixture(scope="module")
def fitted(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("fit")
    cb = NCMonitorCallback(K, layer="body", classifier="fc", lam_H=LAM_H, out=str(tmp / "nc"), figure=False)
    return cb, _fit(tmp, cb), tmp


def test_callback_table_equals_a_monitor_driven_by_hand(fitted):
    cb, _, _ = fitted
    got, want = cb.table(), _by_hand()
    assert got.pop("trainer_epoch").tolist() == list(range(EPOCHS))
    assert list(got.columns) == list(want.columns) and len(got) == EPOCHS
    for col in want.columns:
        if col.endswith("seconds"):
            continue
        np.testing.assert_allclose(got[col].to_numpy(float), want[col].to_numpy(float), rtol=1e-12, atol=0, err_msg=col)
    assert math.isnan(got["nc4"].iloc[0]) and not math.isnan(got["nc4"].iloc[-1])


def test_lam_W_is_read_from_the_classifier_parameter_group(fitted):
    cb, _, _ = fitted
    assert cb.monitor.lam_W == LAM_W


def test_metrics_reach_callback_metrics_and_the_logger(fitted):
    cb, trainer, _ = fitted
    for key in ("nc/nc1", "nc/cdnv", "nc/nc2", "nc/nc3", "nc/dist_W_gram", "nc/H_norm_sq_ratio"):
        assert key in trainer.callback_metrics, key
    assert float(trainer.callback_metrics["nc/nc1"]) == pytest.approx(cb.table()["nc1"].iloc[-1], rel=1e-6)
    logged = pd.read_csv(f"{trainer.logger.log_dir}/metrics.csv")
    assert logged["nc/nc1"].dropna().size == EPOCHS


def test_table_is_written_when_fitting_ends(fitted):
    cb, _, tmp = fitted
    back = pd.read_parquet(tmp / "nc" / "nc_history.parquet")
    assert back["nc1"].tolist() == cb.table()["nc1"].tolist()


def test_decoupled_weight_decay_is_refused_naming_lam_W(tmp_path):
    cb = NCMonitorCallback(K, layer="body", classifier="fc", lam_H=LAM_H)
    with pytest.raises(FCTheoryError, match="lam_W"):
        _fit(tmp_path, cb, opt="adamw")


def test_unknown_layer_and_missing_lam_W_are_refused(tmp_path):
    with pytest.raises(FCTheoryError, match="lam_W"):
        NCMonitorCallback(K, layer="body", lam_H=LAM_H)
    with pytest.raises(FCTheoryError, match="layer"):
        _fit(tmp_path, NCMonitorCallback(K, layer="nope", classifier="fc", lam_H=LAM_H))


def test_no_module_of_fctheory_torch_but_its_lightning_module_imports_lightning():
    """The callback has its own module: ``import fctheory.torch`` neither needs Lightning nor pays for importing
    it (several seconds). Read from the sources, so that Lightning imported by other tests does not matter."""
    package = Path(fctheory.torch.__file__).parent
    offenders = []
    for path in sorted(package.glob("*.py")):
        if path.name == "lightning.py":
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom):
                names = [("." * node.level) + (node.module or "")] + [a.name for a in node.names]
            else:
                continue
            offenders += [f"{path.name}: {n}" for n in names if n.lstrip(".").split(".")[0] == "lightning"]
    assert not offenders


def test_every_n_epochs_monitors_epochs_0_n_2n(fitted, tmp_path):
    cb_all = fitted[0]
    cb = NCMonitorCallback(K, layer="body", classifier="fc", lam_H=LAM_H, every_n_epochs=2)
    trainer = _fit(tmp_path, cb)
    df = cb.table()
    assert df["trainer_epoch"].tolist() == [0, 2]
    # the same seeded training: epoch 0 is the every-epoch run's first row
    assert df["nc1"].iloc[0] == cb_all.table()["nc1"].iloc[0]
    assert not math.isnan(df["nc4"].iloc[1])  # against the means of epoch 0
    logged = pd.read_csv(f"{trainer.logger.log_dir}/metrics.csv")
    assert logged["nc/nc1"].dropna().size == 2


class FrozenNet(Net):
    """lr = 0 in float64: the features are the same in every process and epoch (float32 products may round
    differently for other batch sizes), so a data-parallel fit can be checked against one monitor fed the whole
    data set."""

    def __init__(self):
        super().__init__()
        self.double()

    def configure_optimizers(self):
        return torch.optim.SGD(self.parameters(), lr=0.0)


@pytest.mark.slow  # two forked Lightning processes: several seconds
def test_ddp_two_processes_monitor_the_whole_epoch(tmp_path, monkeypatch):
    """strategy="ddp_fork", 2 CPU processes, each on half of the data: the table that rank 0 writes equals one
    monitor's fed all N samples (the moments are combined across the processes), to 1e-12."""
    # the process launcher keeps files in the temp folder: under tmp_path
    (tmp_path / "tmp").mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path / "tmp"))
    monkeypatch.setenv("TMPDIR", str(tmp_path / "tmp"))
    torch.manual_seed(0)
    net = FrozenNet()
    cb = NCMonitorCallback(
        K, layer="body", classifier="fc", lam_W=LAM_W, lam_H=LAM_H, out=str(tmp_path / "nc"), figure=False
    )
    trainer = pl.Trainer(
        max_epochs=2,
        callbacks=[cb],
        accelerator="cpu",
        devices=2,
        strategy="ddp_fork",
        logger=False,
        enable_checkpointing=False,
        enable_progress_bar=False,
        enable_model_summary=False,
        num_sanity_val_steps=0,
        default_root_dir=str(tmp_path),
    )
    trainer.fit(net, _loader(torch.float64))
    got = pd.read_parquet(tmp_path / "nc" / "nc_history.parquet")
    mon = NCMonitor(K, lam_W=LAM_W, lam_H=LAM_H, classifier=net.fc, progress=False).attach(net.body)
    with torch.no_grad():
        for _ in range(2):
            with mon.epoch():
                for x, y in _loader(torch.float64):
                    with mon.batch(y):
                        net.body(x)
    want = mon.table()
    assert got["N"].tolist() == [N, N]
    for col in want.columns:
        if not col.endswith("seconds"):
            np.testing.assert_allclose(got[col].to_numpy(float), want[col].to_numpy(float), rtol=1e-12, err_msg=col)
