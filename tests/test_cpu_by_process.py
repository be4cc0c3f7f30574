"""scripts/cpu_by_process.py: a command's CPU time by kind of process, its children's included."""

from __future__ import annotations

import subprocess
import sys

from course import paths

BUSY = "import time\nt = time.process_time()\nwhile time.process_time() - t < {}: pass\n"
# A parent that computes for 0.4 s, then starts a child that computes for 0.8 s, and exits 3.
COMMAND = BUSY.format(0.4) + (
    "import subprocess, sys\n"
    f"subprocess.run([sys.executable, '-c', {BUSY.format(0.8)!r}])\n"
    "sys.exit(3)\n")


def test_each_process_is_counted_under_its_kind_and_the_exit_code_is_the_commands():
    result = subprocess.run([sys.executable, "scripts/cpu_by_process.py", sys.executable, "-c", COMMAND],
                            cwd=paths.ROOT, capture_output=True, text=True)
    assert result.returncode == 3, result.stderr
    rows = {line.split("  ")[-1].strip(): line.split() for line in result.stdout.splitlines()}
    assert rows["python -c"][2] == "2", "the parent and its child, both started with -c"
    # 1.2 s, but the child's last moments after the sampler's last look at it (at most one sampling interval)
    assert 0.8 <= float(rows["python -c"][0]) <= 1.6, result.stdout
    assert "in all (CPU seconds, processes)" in rows
