"""fctheory.assumptions._common: the latent-set argument every checker takes (a Task, or a K×L array with n_c),
validated the same way by each of them."""

import numpy as np
import pytest

from fctheory import FCTheoryError, Task
from fctheory.assumptions import check_assumption_A, check_assumption_B, lemma_B_properties


@pytest.mark.parametrize("check", [check_assumption_A, lemma_B_properties, check_assumption_B])
def test_every_checker_validates_the_latent_set_alike(check):
    with pytest.raises(FCTheoryError, match="^n_c=.*required"):
        check(np.zeros((2, 2), dtype=int))
    with pytest.raises(FCTheoryError, match=r"^Z=.*\[0, n_c-1\]"):
        check(np.array([[0, 3]]), n_c=3)
    with pytest.raises(FCTheoryError, match="^Z="):
        check(np.array([0, 1]), n_c=2)
    with pytest.raises(FCTheoryError, match="^n_c=.*match the task"):
        check(Task.full(2, 1, 2), n_c=3)


def test_a_task_and_its_latent_array_give_the_same_answer():
    task = Task.random(3, 2, 2, 5, seed=1)
    assert check_assumption_A(task).violations == check_assumption_A(task.Z, n_c=3).violations
    assert lemma_B_properties(task).messages == lemma_B_properties(task.Z, n_c=3).messages
