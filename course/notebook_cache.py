"""The course's own notebooks (source and release), parsed once per process and version of the file.

The fast path reads them for every notebook it judges (the sample to edit, the program to run, the points of the
checks): parsing and validating one costs about five times copying it.
"""

from __future__ import annotations

import copy
import functools
from pathlib import Path

import nbformat


def read(path: Path) -> nbformat.NotebookNode:
    """nbformat.read(path, as_version=4): a copy, the caller's to change, of the notebook parsed when the file had its
    present modification time and size."""
    return copy.deepcopy(shared(path))


def shared(path: Path) -> nbformat.NotebookNode:
    """The same notebook, not copied: every caller gets this one object, so none may change it (copying costs about
    a tenth of the fast path's time for one notebook)."""
    stat = path.stat()
    return _parsed(path, stat.st_mtime_ns, stat.st_size)


@functools.lru_cache(maxsize=16)
def _parsed(path: Path, mtime_ns: int, size: int) -> nbformat.NotebookNode:
    return nbformat.read(path, as_version=4)
