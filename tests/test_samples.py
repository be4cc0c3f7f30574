"""Notebooks run as `make samples` runs them: a local kernel over IPC, and nothing but the notebook's own output."""

from __future__ import annotations

import subprocess
import sys

from course import paths
from course.grading.sandbox import grading_env

RUN = """
import sys, nbformat
from pathlib import Path
from course.samples import run_notebook
nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell("import warnings; warnings.warn('a real warning')")])
run_notebook(nb, Path(sys.argv[1]))
print(nb.cells[0].outputs[0]["text"])
"""


def test_a_notebook_runs_on_a_local_ipc_kernel_without_the_tcp_warning_and_keeps_real_warnings(tmp_path):
    """(The kernel holds the process's stderr until it exits: a kernel left running would print its parent's exit.)"""
    ran = subprocess.run([sys.executable, "-c", RUN, str(tmp_path)], cwd=paths.ROOT, env=grading_env(),
                         capture_output=True, text=True)
    assert ran.returncode == 0, ran.stderr
    assert "UserWarning: a real warning" in ran.stdout
    assert "without encryption" not in ran.stderr, ran.stderr
    assert "Parent appears to have exited" not in ran.stderr, "the kernel was shut down with the notebook"
