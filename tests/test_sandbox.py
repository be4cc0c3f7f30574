"""The sandbox of the judge path: student code sees no secrets, no network, and cannot outgrow its limits."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

from course import paths
from course.grading import probe, sandbox
from course.grading.grade_one import grading_env, probe_command
from helpers import ASSIGNMENT

pytestmark = [pytest.mark.skipif(sandbox.bubblewrap() is None, reason="bubblewrap is not installed (make sandbox-tools)"),
              pytest.mark.usefixtures("on_fixture")]


SECRET = {"COURSE_TEST_SECRET": "s3cret", "JUPYTERHUB_API_TOKEN": "hub-token"}  # in the grader's environment


def run_in_jail(tmp_path: Path, student_code: str, **limits) -> tuple[sandbox.Outcome, Path]:
    """Run the blank release plus one extra answer cell through the sandboxed probe step."""
    jail = tmp_path / "sandbox"
    probe.prepare(ASSIGNMENT, paths.release_dir(ASSIGNMENT) / f"{ASSIGNMENT}.ipynb", jail)
    program = json.loads((jail / probe.PROGRAM).read_text())
    program.insert(1, ["student-cell", student_code])
    (jail / probe.PROGRAM).write_text(json.dumps(program))
    outcome = sandbox.limited_run(probe_command(jail), log=tmp_path / "log.txt", env={**grading_env(), **SECRET},
                                  cwd=jail, **limits)
    return outcome, jail


def test_student_code_cannot_read_secrets_or_reach_the_network(tmp_path):
    secrets = {
        "solution": paths.source_notebook(ASSIGNMENT),
        "reference": paths.reference_file(ASSIGNMENT),
        "verdicts": paths.assignment_dir(ASSIGNMENT) / "checks.py",
        "judge_data_folder": paths.BUILD,
        "gradebook": paths.GRADEBOOK,
    }
    code = f"""
import json, os, socket
seen = {{name: os.path.exists(path) for name, path in {json.dumps({k: str(v) for k, v in secrets.items()})}.items()}}
seen["environment_secret"] = bool({sorted(SECRET)} and set({sorted(SECRET)}) & set(os.environ))
try:
    socket.create_connection(("1.1.1.1", 80), timeout=2)
    seen["network"] = True
except OSError:
    seen["network"] = False
pids = [int(p) for p in os.listdir("/proc") if p.isdigit() and int(p) != os.getpid()]
seen["solution_through_proc"] = any(os.path.exists(f"/proc/{{pid}}/root{secrets['solution']}") for pid in pids)
seen["grader_process"] = {os.getpid()} in pids  # the test's own process, outside the jail
open("seen.json", "w").write(json.dumps(seen))
"""
    outcome, jail = run_in_jail(tmp_path, code, timeout=60)
    assert outcome.code == 0
    assert json.loads((jail / "seen.json").read_text()) == {
        name: False for name in [*secrets, "environment_secret", "network", "solution_through_proc", "grader_process"]}


def test_the_kernel_sees_a_scratch_copy_of_its_folder_and_nothing_of_the_course(tmp_path):
    """nbgrader writes into the kernel's folder after the run: the kernel's own writes and links must land elsewhere."""
    folder, scratch = tmp_path / "autograded", tmp_path / "scratch"
    folder.mkdir()
    (folder / "notebook.ipynb").write_text("nbgrader's copy")
    scratch.mkdir()
    (scratch / "notebook.ipynb").write_text("the kernel's copy")
    code = ("import json, os; os.remove('notebook.ipynb'); os.symlink('/etc/passwd', 'notebook.ipynb'); "
            f"json.dump({{'course': os.path.exists({str(paths.ROOT / 'course')!r}), "
            "'secret': 'COURSE_TEST_SECRET' in os.environ}, open('seen.json', 'w'))")
    command = sandbox.jail([sys.executable, "-c", code], workdir=folder, workdir_source=scratch)
    outcome = sandbox.limited_run(command, timeout=60, log=tmp_path / "log.txt", env={**grading_env(), **SECRET})
    assert outcome.code == 0, (tmp_path / "log.txt").read_text()
    assert (folder / "notebook.ipynb").read_text() == "nbgrader's copy" and not (folder / "seen.json").exists()
    assert (scratch / "notebook.ipynb").is_symlink()
    assert json.loads((scratch / "seen.json").read_text()) == {"course": False, "secret": False}


def test_memory_bomb_is_killed_and_reported(tmp_path):
    outcome, jail = run_in_jail(tmp_path, "x = bytearray(6 * 2**30)\nx[::4096] = b'1' * (len(x) // 4096)",
                                timeout=60, memory_mb=1536)
    assert outcome.code != 0 and outcome.out_of_memory
    assert not (jail / probe.OUTPUTS).exists()


def test_fork_bomb_is_refused_and_a_way_around_is_bounded(tmp_path):
    code = """
import os, posix
try:
    os.fork()
    refused = ""
except PermissionError as error:
    refused = str(error)
children = 0
for _ in range(5000):
    try:
        posix.fork()  # around the refusal: the child exits at once
        children += 1
    except OSError:
        break
open("children.txt", "w").write(f"{refused}|{children}")
"""
    outcome, jail = run_in_jail(tmp_path, code, timeout=60, max_processes=64)
    assert outcome.code == 0, "the probe run goes on after the bomb fizzles"
    refused, children = (jail / "children.txt").read_text().split("|")
    assert "os.fork is disabled while grading" in refused
    assert int(children) < 64
    assert outcome.seconds < 30


def test_endless_loop_is_stopped_at_the_time_limit(tmp_path):
    outcome, _ = run_in_jail(tmp_path, "while True:\n    pass", timeout=5)
    assert outcome.timed_out and 5 <= outcome.seconds < 20


def test_hard_exit_is_a_crash_not_a_hang(tmp_path):
    outcome, jail = run_in_jail(tmp_path, "import os\nos._exit(3)", timeout=60)
    assert outcome.code == 3 and not (jail / probe.OUTPUTS).exists()


def test_sys_exit_in_a_cell_only_stops_that_cell(tmp_path):
    outcome, jail = run_in_jail(tmp_path, "import sys\nsys.exit('bye')", timeout=60)
    assert outcome.code == 0
    report = json.loads((jail / probe.REPORT).read_text())
    assert report["cell_errors"]["student-cell"] == "SystemExit: bye"


def test_the_socket_folder_of_a_grading_that_is_gone_is_removed_by_the_next_and_a_live_ones_stays():
    gone = subprocess.Popen(["true"])
    gone.wait()
    stale, live = (Path(tempfile.mkdtemp(prefix=f"{sandbox.SOCKETS_PREFIX}{pid}-", dir="/tmp"))
                   for pid in (gone.pid, os.getpid()))
    try:
        assert stale in sandbox.remove_stale_socket_folders()
        assert not stale.exists() and live.exists()
    finally:
        shutil.rmtree(live)
