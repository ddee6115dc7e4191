"""File formats and serialization: the one home of everything fctheory reads and writes.

* :func:`to_json` — Python/NumPy/mpmath values → JSON values (the rules of every ``--json`` output);
  :func:`versions` — fctheory, Python and package versions for the record of a result;
* task files and the task codec (:func:`load_task`, :func:`save_task`, :func:`task_to_dict`,
  :func:`task_from_dict`, :func:`task_object`, :func:`task_from_sizes`, :func:`task_fingerprint`), latent
  variables and word
  frequencies from files (:func:`load_latent`, :func:`load_frequencies`);
* weights (:func:`load_weights`, :func:`weights_from_state_dict`): ``.npz``, trainer checkpoints,
  ``.safetensors`` and PyTorch state_dicts in the authors' notebook layout;
* run directories (:func:`load_run`, :func:`save_run`, :class:`RunFiles`);
* the trainer's checkpoint format (:mod:`fctheory.io.checkpoint`: written by ``train(checkpoint=...)``, read
  and verified by ``train(resume=...)``, :func:`load_run` and :func:`load_weights`).

docs/api.md ("File formats") lists every format.
"""

from ._versions import versions
from .json import to_json
from .runs import RUN_FORMAT, RunFiles, load_run, save_run
from .tasks import (
    TASK_FORMAT,
    TASK_VERSION,
    Z_MAX_ENTRIES,
    load_frequencies,
    load_latent,
    load_task,
    save_task,
    task_from_dict,
    task_fingerprint,
    task_from_sizes,
    task_object,
    task_to_dict,
)
from .weights import load_weights, weights_from_state_dict

__all__ = [
    "to_json",
    "versions",
    "load_task",
    "save_task",
    "task_to_dict",
    "task_from_dict",
    "task_object",
    "task_from_sizes",
    "task_fingerprint",
    "load_latent",
    "load_frequencies",
    "load_weights",
    "weights_from_state_dict",
    "load_run",
    "save_run",
    "RunFiles",
    "TASK_FORMAT",
    "TASK_VERSION",
    "RUN_FORMAT",
    "Z_MAX_ENTRIES",
]
