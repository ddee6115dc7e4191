"""Safe files: atomic writes, a format version in every file fctheory writes, verified loads.

Every file is written to a temporary name in the same folder and renamed into place (``os.replace``),
so a crash leaves either the old file or the new one, never half of one. ``.npz`` files carry a
``__format__`` entry (the writer name and version); :func:`load_npz` refuses damaged, truncated or
foreign files with :class:`~fctheory.FCTheoryError`.
"""

from __future__ import annotations

import contextlib
import json
import os
import tempfile
import zipfile

import numpy as np

from ._validate import check_output_path, fail

__all__ = ["atomic_path", "write_npz", "load_npz", "write_json", "load_json", "FORMAT_VERSION"]

FORMAT_VERSION = 1


@contextlib.contextmanager
def atomic_path(path: str, *, name: str = "path"):
    """Yield a temporary path beside ``path``; on success it is renamed onto ``path`` atomically."""
    check_output_path(name, path)
    folder = os.path.dirname(os.path.abspath(path))
    os.makedirs(folder, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{os.path.basename(path)}.", suffix=".tmp", dir=folder)
    os.close(fd)
    # mkstemp creates 0600; give the final file the permissions an ordinary open() would (0666 & ~umask)
    umask = os.umask(0)
    os.umask(umask)
    os.chmod(tmp, 0o666 & ~umask)
    try:
        yield tmp
        with open(tmp, "rb+") as f:
            os.fsync(f.fileno())
        os.replace(tmp, path)
    finally:
        if os.path.exists(tmp):
            os.remove(tmp)


def write_npz(path: str, arrays: dict, *, kind: str, name: str = "path") -> str:
    """Write ``arrays`` to ``path`` (.npz, uncompressed) atomically with a ``__format__`` header."""
    header = json.dumps({"kind": kind, "version": FORMAT_VERSION, "writer": "fctheory"})
    with atomic_path(path, name=name) as tmp:
        with open(tmp, "wb") as f:
            np.savez(f, __format__=np.array(header), **arrays)
    return path


def load_npz(path, *, kind: str | None = None, name: str = "path", required=()) -> dict:
    """Load an ``.npz`` written by :func:`write_npz` (or a plain one when ``kind`` is None).

    Refuses (FCTheoryError naming ``name``): a missing file, a folder, a damaged/truncated archive,
    pickled object arrays, a different ``kind``, a newer format version, missing ``required`` keys.
    """
    if not isinstance(path, (str, os.PathLike)):
        fail(name, path, "must be a path to an .npz file")
    path = os.fspath(path)
    if not os.path.isfile(path):
        fail(name, path, "must be an existing file")
    try:
        with np.load(path, allow_pickle=False) as z:
            data = {k: z[k] for k in z.files}
    except (zipfile.BadZipFile, EOFError, OSError, ValueError, KeyError, zipfile.LargeZipFile) as exc:
        fail(name, path, f"is not a readable .npz file ({type(exc).__name__}: {exc})")
    except Exception as exc:  # zlib errors, truncated members: any failure to read is a damaged file
        fail(name, path, f"is damaged ({type(exc).__name__}: {exc})")
    header = data.pop("__format__", None)
    if kind is not None:
        if header is None:
            fail(name, path, f"is not an fctheory {kind} file (no format header)")
        try:
            meta = json.loads(str(header))
        except ValueError:
            fail(name, path, "has a damaged format header")
        if meta.get("kind") != kind:
            fail(name, path, f"is a {meta.get('kind')!r} file, expected {kind!r}")
        if not isinstance(meta.get("version"), int) or meta["version"] > FORMAT_VERSION:
            fail(name, path, f"has format version {meta.get('version')!r}; this fctheory reads <= {FORMAT_VERSION}")
    for key in required:
        if key not in data:
            fail(name, path, f"is missing the entry {key!r}")
    return data


def write_json(path: str, obj, *, name: str = "path") -> str:
    """Write JSON atomically."""
    with atomic_path(path, name=name) as tmp:
        with open(tmp, "w", encoding="utf-8") as f:
            json.dump(obj, f, indent=2, sort_keys=True)
            f.write("\n")
    return path


def load_json(path, *, name: str = "path"):
    """Read JSON, refusing missing or damaged files with FCTheoryError."""
    if not isinstance(path, (str, os.PathLike)) or not os.path.isfile(path):
        fail(name, path, "must be an existing JSON file")
    try:
        with open(path, encoding="utf-8") as f:
            return json.load(f)
    except (OSError, UnicodeDecodeError, ValueError) as exc:
        fail(name, path, f"is not valid JSON ({type(exc).__name__}: {exc})")
