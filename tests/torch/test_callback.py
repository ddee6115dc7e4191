"""The callbacks' shared helpers (fctheory/torch/_callback.py): submodules by name, λ_W from an optimizer, the
logged numbers of a row, the files written when training ends."""

import os

import pytest

torch = pytest.importorskip("torch", reason="needs torch: pip install 'fctheory[torch]'")

from fctheory import FCTheoryError  # noqa: E402
from fctheory.torch._callback import check_names, logged_numbers, submodule, weight_decay, write_outputs  # noqa: E402


def _model():
    return torch.nn.Sequential(torch.nn.Linear(3, 4), torch.nn.Sequential(torch.nn.ReLU(), torch.nn.Linear(4, 2)))


def test_submodule_finds_a_dotted_name_and_refuses_a_missing_one_naming_the_parameter():
    m = _model()
    assert submodule(m, "1.1", "layer") is m[1][1]
    with pytest.raises(FCTheoryError, match=r"layer=.*'nope'.*must name a submodule of the Sequential"):
        submodule(m, "nope", "layer")


def test_weight_decay_is_read_from_the_group_that_holds_the_weight():
    m = _model()
    head = m[1][1].weight
    opt = torch.optim.SGD(
        [{"params": [m[0].weight], "weight_decay": 0.5}, {"params": [head], "weight_decay": 2e-3}], lr=0.1
    )
    assert weight_decay([opt], head) == 2e-3
    assert weight_decay([torch.optim.SGD([m[0].weight], lr=0.1), opt], head) == 2e-3  # the first that holds it


class _Wrapper:
    """Stands in for accelerate's optimizer wrapper: the real optimizer as ``.optimizer``, its groups shared."""

    def __init__(self, inner):
        self.optimizer = inner
        self.param_groups = inner.param_groups


def test_a_wrapped_optimizer_is_judged_by_the_one_it_wraps():
    m = _model()
    head = m[1][1].weight
    assert weight_decay([_Wrapper(torch.optim.SGD([head], lr=0.1, weight_decay=1e-3))], head) == 1e-3
    with pytest.raises(FCTheoryError, match=r"lam_W.*AdamW.*decoupled"):
        weight_decay([_Wrapper(torch.optim.AdamW([head], lr=0.1, weight_decay=1e-3))], head)


@pytest.mark.parametrize("decay", [0.0, -1e-3])
def test_a_weight_decay_that_is_not_positive_is_refused(decay):
    m = _model()
    head = m[1][1].weight
    opt = torch.optim.SGD([{"params": [head], "weight_decay": decay}], lr=0.1)
    opt.param_groups[0]["weight_decay"] = decay  # SGD itself refuses a negative decay at construction
    with pytest.raises(FCTheoryError, match=rf"lam_W.*weight decay of the classifier is {decay}"):
        weight_decay([opt], head)


def test_no_optimizer_holding_the_weight_is_refused():
    m = _model()
    with pytest.raises(FCTheoryError, match=r"lam_W.*no optimizer holds the classifier's weight"):
        weight_decay([torch.optim.SGD([m[0].weight], lr=0.1, weight_decay=1e-3)], m[1][1].weight)


def test_logged_numbers_keep_the_numbers_and_leave_out_counters_and_flags():
    row = {"epoch": 3, "trainer_epoch": 2, "nc1": 0.25, "n": 40, "converged": True, "name": "x"}
    got = logged_numbers(row, "nc/")
    assert got == {"nc/nc1": 0.25, "nc/n": 40.0}
    assert all(type(v) is float for v in got.values())


class _Monitor:
    def __init__(self, rows):
        self.rows = rows
        self.calls = []

    def save(self, path):
        self.calls.append(("save", path))

    def plot(self, path):
        self.calls.append(("plot", path))


def test_write_outputs_writes_the_table_and_the_figure_only_when_there_is_something(tmp_path):
    out = tmp_path / "a" / "b"
    write_outputs(_Monitor([]), str(out), True)  # no row: nothing, not even the folder
    assert not out.exists()
    write_outputs(None, str(out), True)
    write_outputs(_Monitor([{}]), None, True)
    assert not out.exists()
    mon = _Monitor([{"nc1": 1.0}])
    write_outputs(mon, str(out), False)
    assert os.path.isdir(out) and mon.calls == [("save", os.path.join(str(out), "nc_history.parquet"))]
    mon = _Monitor([{"nc1": 1.0}])
    write_outputs(mon, str(out), True)
    assert [c for c, _ in mon.calls] == ["save", "plot"]
    assert mon.calls[1][1] == os.path.join(str(out), "nc_history.png")


def test_check_names_accepts_str_and_none_and_refuses_the_rest_naming_it():
    check_names(layer="a.b", classifier=None, prefix="nc/")
    with pytest.raises(FCTheoryError, match=r"^prefix=3 .*must be a str"):
        check_names(layer="a", prefix=3)
