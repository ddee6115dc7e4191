"""Former home of task files, Z/μ loaders and run directories; they live in :mod:`fctheory.io` (this path keeps
working)."""

from ..io.runs import RUN_FORMAT, RunFiles, load_run, save_run
from ..io.tasks import (
    TASK_FORMAT,
    TASK_VERSION,
    load_frequencies,
    load_latent,
    load_task,
    save_task,
    task_from_dict,
    task_to_dict,
)

__all__ = [
    "load_task",
    "save_task",
    "task_to_dict",
    "task_from_dict",
    "load_latent",
    "load_frequencies",
    "load_run",
    "RunFiles",
    "TASK_FORMAT",
    "TASK_VERSION",
    "save_run",
    "RUN_FORMAT",
]
