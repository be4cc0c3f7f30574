"""scripts/cpu_by_process.py: a command's CPU time by kind of process, its children's included."""

from __future__ import annotations

import subprocess
import sys
import time

from course import paths

# Computes for {} s, then idles for 0.6 s: the sampler sees all of that CPU time before the process ends.
BUSY = "import time\nt = time.process_time()\nwhile time.process_time() - t < {}: pass\ntime.sleep(0.6)\n"
# A parent that computes for 0.4 s, then starts a child that computes for 0.8 s, and exits 3.
COMMAND = BUSY.format(0.4) + (
    "import subprocess, sys\n"
    f"subprocess.run([sys.executable, '-c', {BUSY.format(0.8)!r}])\n"
    "sys.exit(3)\n")


def test_the_commands_processes_are_counted_under_their_kind_and_its_exit_code_passed_on():
    """A process the command did not start (here: one started meanwhile that computes for 1 s) is not counted."""
    sampler = subprocess.Popen([sys.executable, "scripts/cpu_by_process.py", sys.executable, "-c", COMMAND],
                               cwd=paths.ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    time.sleep(0.3)
    subprocess.run([sys.executable, "-c", BUSY.format(1.0)])
    output, errors = sampler.communicate()
    assert sampler.returncode == 3, errors
    rows = {line.split("  ")[-1].strip(): line.split() for line in output.splitlines()}
    assert rows["python -c"][2] == "2", "the parent and its child, both started with -c"
    assert 1.1 <= float(rows["python -c"][0]) <= 1.6, output
    assert "in all (CPU seconds, processes)" in rows
