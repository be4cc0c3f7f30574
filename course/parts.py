"""An assignment's Python parts (checks.py, probes.py, corpus.py, ...), loaded from its folder by path.

Assignment folders are not a package: the machinery finds them (course.paths) and
loads what it needs from them under private module names.
"""

from __future__ import annotations

import importlib.util
import sys
from functools import cache
from pathlib import Path
from types import ModuleType

from course import paths


@cache
def load_module(path: Path) -> ModuleType:
    """The Python file at `path`, loaded once, under a private module name."""
    name = f"_course_{path.parent.name}_{path.stem}"
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module  # dataclasses and pickle look their module up by name
    spec.loader.exec_module(module)
    return module


def part(assignment: str, name: str) -> ModuleType:
    """`assignments/<assignment>/<name>.py` as a module (e.g. part(a, "checks").CHECKS)."""
    return load_module(paths.assignment_dir(assignment) / f"{name}.py")
