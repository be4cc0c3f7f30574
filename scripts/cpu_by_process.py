"""Print where a command's CPU time went, by kind of process: the course's modules, nbgrader's commands, kernels,
Chromium, pytest's workers, ..., the most CPU first.

    .venv/bin/python scripts/cpu_by_process.py make test

Runs the command and reads /proc every SAMPLE_S seconds: the CPU time of the command and of every process it starts,
sandboxed ones included (pytest's own durations give wall time per test; the CPU of a test's child processes is
that test's only once they exit, and never that of a bubblewrap sandbox's). A process counts when its parents, as
first seen, lead to the command. It is named by its command line (KINDS: the first pattern it holds), so the
bubblewrap processes that wrap a sandboxed one count among its kind (three processes for one sandboxed kernel).
A process that lives less than SAMPLE_S is missed (and the processes it started, unless seen before it), and one
sampled last up to SAMPLE_S before it ended loses that tail: the figures are a little low.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

SAMPLE_S = 0.2
TICKS = os.sysconf("SC_CLK_TCK")
# (regular expression, kind: its groups fill the {}), the first that matches a command line names the process: a
# sandboxed process's command line is bubblewrap's, which holds the command it runs.
KINDS = (("ipykernel_launcher", "kernel"), (r"nbgrader_cli (\w+)", "nbgrader {}"), ("chrom", "chromium"),
         ("configurable-http-proxy", "proxy (node)"), (re.escape("exec(eval(sys.stdin.readline()))"), "pytest worker"),
         (r"-m (course[\w.]+)", "{}"), (r"-m ([\w.]+)", "python -m {}"), (r"bin/(jupyter[\w-]*)", "{}"),
         (r"bin/(alembic)", "{}"), (r"python\S* -c ", "python -c"))


def kind(command: str, name: str) -> str:
    """The kind of a process from its command line (or its name, if the command line is empty)."""
    for pattern, label in KINDS:
        found = re.search(pattern, command)
        if found:
            return label.format(*found.groups())
    return name


def boot_ticks() -> int:
    """Clock ticks since boot now: the unit of a process's start time in /proc/PID/stat."""
    return int(float(Path("/proc/uptime").read_text().split()[0]) * TICKS)


def sample(seen: dict, since: int) -> None:
    """Record in `seen` (pid -> [kind, CPU seconds, parent's pid when first seen]) every process started after
    `since` (clock ticks). (A pid used twice in one run, which takes millions of processes, counts as one.)"""
    for pid in map(int, filter(str.isdigit, os.listdir("/proc"))):
        try:
            stat = Path(f"/proc/{pid}/stat").read_text()
            name, fields = stat[stat.index("(") + 1:stat.rindex(")")], stat[stat.rindex(")") + 2:].split()
            if int(fields[19]) < since:
                continue
            cpu = (int(fields[11]) + int(fields[12])) / TICKS
            if pid not in seen:
                command = Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
                seen[pid] = [kind(command, name), cpu, int(fields[1])]
            seen[pid][1] = max(seen[pid][1], cpu)
        except (OSError, ValueError, IndexError):  # gone while read
            pass


def descendants(seen: dict, root: int) -> set[int]:
    """`root` and the processes of `seen` whose parents lead to it."""
    found, grew = {root}, True
    while grew:
        new = {pid for pid, (_, _, parent) in seen.items() if parent in found} - found
        found |= new
        grew = bool(new)
    return found


def cpu_by_kind(command: list[str]) -> tuple[int, Counter, Counter]:
    """Run `command`; (its exit code, CPU seconds by kind, processes by kind)."""
    seen: dict = {}
    since = boot_ticks()
    process = subprocess.Popen(command)
    while process.poll() is None:
        sample(seen, since)
        time.sleep(SAMPLE_S)
    seconds, count = Counter(), Counter()
    for pid in descendants(seen, process.pid) & set(seen):
        label, cpu, _ = seen[pid]
        seconds[label] += cpu
        count[label] += 1
    return process.returncode, seconds, count


def main() -> None:
    if len(sys.argv) < 2:
        raise SystemExit(__doc__)
    code, seconds, count = cpu_by_kind(sys.argv[1:])
    for label, cpu in seconds.most_common():
        print(f"{cpu:8.1f} s  {count[label]:5d}  {label}")
    print(f"{sum(seconds.values()):8.1f} s  {sum(count.values()):5d}  in all (CPU seconds, processes)")
    sys.exit(code)


if __name__ == "__main__":
    main()
