"""Gradescope's container, made on this machine: the autograder's zip unpacked at /autograder, run as Gradescope runs it.

A folder holds /autograder; its commands run in bubblewrap with this machine's files, /autograder/source,
/autograder/submission and /autograder/results really at those paths, no network, and the repository's venv read-only
at /autograder/venv (so setup.sh must find everything it needs installed). Used by the Gradescope tests
(tests/test_gradescope.py) and by `make bench-gradescope`.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import zipfile
from collections.abc import Callable
from pathlib import Path

from course.grading import limits
from course.grading.confine import compiled_filter


class Container:
    """A folder holding /autograder, and the commands that run inside a container where it is at /autograder."""

    def __init__(self, box: Path, autograder_zip: Path):
        self.box, self.autograder = box, box / "autograder"
        with zipfile.ZipFile(autograder_zip) as archive:
            archive.extractall(self.autograder / "source")
        for name in ("setup.sh", "run_autograder", "environment.sh"):  # zipfile keeps no modes
            (self.autograder / "source" / name).chmod(0o755)
        shutil.copy(self.autograder / "source" / "run_autograder", self.autograder / "run_autograder")
        (box / "home").mkdir()
        (box / "no-namespaces.bpf").write_bytes(compiled_filter())

    def run(self, *command: str, env: dict[str, str] | None = None,
            namespaces: bool = True) -> subprocess.CompletedProcess:
        """`command` in the container, with a plain root environment (and `env`), as Gradescope runs its scripts;
        without `namespaces`, a container that forbids making new ones (bubblewrap cannot run inside)."""
        # A container that forbids namespaces, as Docker's default seccomp profile does: the jail's own filter, which
        # refuses unshare, setns, mount and clone's namespace flags (root keeps its other rights, to change users).
        filter_fd = None if namespaces else os.open(self.box / "no-namespaces.bpf", os.O_RDONLY)
        args = ["bwrap", "--unshare-net", "--die-with-parent", "--dev", "/dev", "--proc", "/proc", "--cap-add", "ALL",
                *(["--seccomp", str(filter_fd)] if filter_fd is not None else [])]
        for entry in sorted(Path("/").iterdir()):
            if entry.name in ("dev", "proc"):
                continue
            args += (["--symlink", os.readlink(entry), str(entry)] if entry.is_symlink()
                     else ["--bind", str(entry), str(entry)])
        args += ["--bind", str(self.autograder), "/autograder", "--ro-bind", sys.prefix, "/autograder/venv"]
        # Gradescope gives a container cores of its own; this one shares the machine with another test worker, so it
        # gets the worker's share of threads (tests/conftest.py), as a container of that many cores would.
        threads = {name: os.environ[name] for name in limits.THREAD_VARIABLES if name in os.environ}
        plain = {"PATH": "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin", "HOME": str(self.box / "home"),
                 "LANG": "C.UTF-8", "PIP_NO_INDEX": "1", **threads, **(env or {})}
        try:
            return subprocess.run(args + list(command), env=plain, capture_output=True, text=True, timeout=900,
                                  pass_fds=() if filter_fd is None else (filter_fd,))
        finally:
            if filter_fd is not None:
                os.close(filter_fd)

    def setup(self) -> None:
        result = self.run("bash", "/autograder/source/setup.sh")
        if result.returncode:
            raise RuntimeError(f"setup.sh failed:\n{result.stdout[-3000:]}{result.stderr[-3000:]}")

    def grade(self, write: Callable[[Path], None], env: dict[str, str] | None = None, namespaces: bool = True) -> dict:
        """Upload what `write` puts in the submission folder, run run_autograder; its results.json."""
        for folder in ("submission", "results"):
            shutil.rmtree(self.autograder / folder, ignore_errors=True)
            (self.autograder / folder).mkdir()
        write(self.autograder / "submission")
        result = self.run("/autograder/run_autograder", env=env, namespaces=namespaces)
        if result.returncode:
            raise RuntimeError(f"run_autograder failed:\n{result.stderr[-3000:]}")
        return json.loads((self.autograder / "results" / "results.json").read_text())
