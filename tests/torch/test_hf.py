"""NCMonitorCallback for Hugging Face transformers.Trainer: a tiny GPT-2 (built here, nothing downloaded) trained on
a Task's sentences. The callback's table holds the NC metrics of the penultimate hidden states at each next-token
position labelled by the next token, recomputed here from the recorded training forward passes with the
two-pass reference functions; it reads λ_W from an L2-coupled optimizer, refuses AdamW's, logs into the trainer
state and writes its table."""

import logging

import numpy as np
import pytest

torch = pytest.importorskip("torch", reason="needs torch: pip install 'fctheory[torch]'")
transformers = pytest.importorskip("transformers", reason="needs transformers: pip install 'fctheory[hf]'")
pytest.importorskip(
    "accelerate", reason="needs accelerate (the Trainer uses it): pip install 'fctheory[hf]'"
)  # the Trainer needs it (transformers[torch])
pd = pytest.importorskip("pandas")
pytest.importorskip("pyarrow")

from fctheory import FCTheoryError, Task  # noqa: E402
from fctheory.metrics import nc1, nc2  # noqa: E402
from fctheory.torch.hf import NCMonitorCallback  # noqa: E402
from fctheory.torch.lm import task_sentences  # noqa: E402

logging.getLogger("transformers").setLevel(logging.ERROR)

TASK = Task.random(6, 1, 5, 64, seed=0)  # 6 words, sentences of 5 words
X = task_sentences(TASK, 1, seed=0)  # 64 sentences: 4 batches of 16 per epoch
LABELS = X.clone()
LABELS[::4, -1] = -100  # every fourth sentence's last word left out of the loss (as padding would be)
EPOCHS, LAM_W, LAM_H = 3, 1e-3, 1e-4


class Sentences(torch.utils.data.Dataset):
    def __len__(self):
        return len(X)

    def __getitem__(self, i):
        return {"input_ids": X[i], "labels": LABELS[i]}


def _model():
    torch.manual_seed(0)
    config = transformers.GPT2Config(
        vocab_size=TASK.n_w,
        n_positions=TASK.L,
        n_embd=16,
        n_layer=1,
        n_head=2,
        resid_pdrop=0.0,
        embd_pdrop=0.0,
        attn_pdrop=0.0,
        bos_token_id=0,
        eos_token_id=0,
    )
    return transformers.GPT2LMHeadModel(config)


def _train(tmp_path, callback, *, optimizer=None, epochs=EPOCHS, record=None, **kw):
    model = _model()
    if record is not None:  # the test's own record of every training forward: (hidden states, labels)

        def take(module, args, kwargs):
            if module.training:
                record.append([None, kwargs["labels"].clone()])

        model.register_forward_pre_hook(take, with_kwargs=True)
        model.transformer.ln_f.register_forward_hook(
            lambda m, i, out: record[-1].__setitem__(0, out.detach().clone()) if m.training else None
        )
    args = transformers.TrainingArguments(
        output_dir=str(tmp_path / "trainer"),
        num_train_epochs=epochs,
        per_device_train_batch_size=16,
        learning_rate=1e-2,
        report_to="none",
        save_strategy="no",
        logging_strategy="no",
        use_cpu=True,
        disable_tqdm=True,
        seed=0,
        **kw,
    )
    opt = (optimizer(model), None) if optimizer is not None else (None, None)
    trainer = transformers.Trainer(
        model=model,
        args=args,
        train_dataset=Sentences(),
        callbacks=callback if isinstance(callback, list) else [callback],
        optimizers=opt,
        eval_dataset=Sentences() if kw.get("eval_strategy") else None,
    )
    trainer.train()
    return trainer, model


@pytest.fixture(scope="module")
def fitted(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("hf")
    record = []
    cb = NCMonitorCallback(lam_W=LAM_W, lam_H=LAM_H, out=str(tmp / "nc"), figure=False)
    # evaluation every 3 steps (mid-epoch, 4 steps an epoch): its forward passes must not be counted
    trainer, model = _train(tmp, cb, record=record, eval_strategy="steps", eval_steps=3, per_device_eval_batch_size=64)
    return cb, trainer, record, tmp


def test_the_table_is_that_of_the_next_token_features(fitted):
    """Per epoch: N is the number of labelled next tokens, and NC1/NC2 are those of the recorded training hidden
    states at positions t labelled by the token at t + 1 (two-pass reference functions, 1e-9)."""
    cb, _, record, _ = fitted
    df = cb.table()
    assert df["trainer_epoch"].tolist() == list(range(EPOCHS)) and cb.monitor.K == TASK.n_w
    assert len(record) == 4 * EPOCHS  # training forwards only
    per_epoch = int((LABELS[:, 1:] != -100).sum())
    assert per_epoch == 64 * 4 - 16
    for e in range(EPOCHS):
        H = torch.cat([h[:, :-1].reshape(-1, 16) for h, _ in record[4 * e : 4 * e + 4]]).double().numpy()
        y = torch.cat([lab[:, 1:].reshape(-1) for _, lab in record[4 * e : 4 * e + 4]]).numpy()
        H, y = H[y != -100], y[y != -100]
        assert df["N"].iloc[e] == len(y) == per_epoch
        assert df["nc1"].iloc[e] == pytest.approx(nc1(H, y, K=TASK.n_w), rel=1e-9)
        means = np.stack([H[y == k].mean(axis=0) for k in range(TASK.n_w)])
        assert df["nc2"].iloc[e] == pytest.approx(nc2(means), rel=1e-9)
    assert np.isfinite(df[["nc1", "cdnv", "nc2", "nc2_W", "nc3", "dist_W_gram"]].to_numpy(dtype=float)).all()


def test_logged_into_the_state_and_written(fitted):
    cb, trainer, _, tmp = fitted
    logged = [h for h in trainer.state.log_history if "nc/nc1" in h]
    assert [h["nc/nc1"] for h in logged] == pytest.approx(cb.table()["nc1"].tolist(), rel=1e-15)
    assert [h["epoch"] for h in logged] == pytest.approx([1.0, 2.0, 3.0])
    assert cb.logged == {k: v for k, v in logged[-1].items() if k.startswith("nc/")}
    pd.testing.assert_frame_equal(pd.read_parquet(tmp / "nc" / "nc_history.parquet"), cb.table())
    # the hooks are gone when training ends: another forward pass feeds nothing
    before = len(cb.monitor.rows)
    model = trainer.model.train()
    model(input_ids=X[:4], labels=X[:4])
    assert len(cb.monitor.rows) == before and cb.monitor._moments is None


def test_a_named_layer_and_a_weight_decay_read_from_sgd(tmp_path, fitted):
    """Hooking GPT-2's final LayerNorm by name gives the features of the default hook (the output layer's input);
    λ_W is the weight decay of the SGD group holding lm_head's weight; every_n_epochs skips epochs; with gradient
    accumulation every micro-batch is fed."""

    def sgd(model):
        head = model.lm_head.weight
        rest = [p for p in model.parameters() if p is not head]
        return torch.optim.SGD([{"params": rest}, {"params": [head], "weight_decay": 2e-3}], lr=0.1)

    cb = NCMonitorCallback(layer="transformer.ln_f", classifier="lm_head", lam_H=LAM_H, every_n_epochs=2)
    ref = NCMonitorCallback(lam_H=LAM_H, lam_W=2e-3, every_n_epochs=2)  # in the same training
    _train(tmp_path, [cb, ref], optimizer=sgd, gradient_accumulation_steps=2)
    assert cb.monitor.lam_W == 2e-3
    assert cb.table()["trainer_epoch"].tolist() == [0, 2]
    assert (cb.table()["N"] == 64 * 4 - 16).all()  # every micro-batch of the accumulated steps
    cols = ["N", "nc1", "cdnv", "nc2", "nc2_W", "nc3", "W_norm_sq", "dist_W_gram"]
    np.testing.assert_allclose(cb.table()[cols].to_numpy(float), ref.table()[cols].to_numpy(float), rtol=1e-12)


def test_refusals(tmp_path):
    with pytest.raises(FCTheoryError, match="lam_W.*AdamW"):  # the Trainer's default optimizer (wrapped)
        _train(tmp_path, NCMonitorCallback(lam_H=LAM_H), epochs=1)
    with pytest.raises(FCTheoryError, match="lam_W.*weight decay of the classifier is 0.0"):
        _train(tmp_path, NCMonitorCallback(lam_H=LAM_H), optimizer=lambda m: torch.optim.SGD(m.parameters(), lr=0.1))
    with pytest.raises(FCTheoryError, match="layer"):
        _train(tmp_path, NCMonitorCallback(lam_H=LAM_H, lam_W=LAM_W, layer="transformer.nope"), epochs=1)
    with pytest.raises(FCTheoryError, match="lam_H"):
        NCMonitorCallback(lam_H=0.0)
    with pytest.raises(FCTheoryError, match="labels"):
        NCMonitorCallback(lam_H=LAM_H, labels="labels")
    with pytest.raises(FCTheoryError, match="table"):
        NCMonitorCallback(lam_H=LAM_H).table()
