"""The sandbox of the judge path: student code sees no secrets, no network, and cannot outgrow its limits."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest

from course import paths, permissions
from course.grading import limits as limits_module
from course.grading import probe, sandbox
from course.grading.checking import probe_command
from course.grading.sandbox import grading_env
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
    sandbox.give_to_jail(jail)
    outcome = sandbox.limited_run(probe_command(jail), log=tmp_path / "log.txt", env={**grading_env(), **SECRET},
                                  cwd=jail, stdin=paths.probes_file(ASSIGNMENT), **limits)
    sandbox.reclaim(jail)
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
    sandbox.give_to_jail(scratch)
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


STATUS_READER = """
import ctypes, errno, json, os
status = dict(line.split(":", 1) for line in open("/proc/self/status").read().splitlines())
libc = ctypes.CDLL(None, use_errno=True)
refused = {}
for name, number in SYSCALLS.items():  # each called with zeroed arguments: only the filter's answer matters
    result = libc.syscall(number, 0, 0, 0, 0, 0, 0)
    refused[name] = result == -1 and ctypes.get_errno() == errno.EPERM
try:
    open("/proc/sys/kernel/core_pattern", "w").write("|/bin/true")
    refused["core_pattern"] = False
except OSError:
    refused["core_pattern"] = True
import socket
for name, family in (("inet_socket", socket.AF_INET), ("inet6_socket", socket.AF_INET6)):
    try:
        socket.socket(family, socket.SOCK_STREAM).close()
        refused[name] = False
    except OSError as error:
        refused[name] = error.errno == errno.EACCES
seen = {"uid": os.getuid(), "groups": os.getgroups(), "refused": refused,
        **{key: status[key].strip() for key in ("CapInh", "CapPrm", "CapEff", "CapBnd", "CapAmb", "NoNewPrivs", "Seccomp")}}
"""
# x86-64 numbers of the calls the jail refuses: file handles (the "shocker" escape), mounts, namespaces, tracing,
# keyrings, BPF, perf, modules, kexec, System V IPC (which outlives a process), modify_ldt; and sockets of the
# network (IPv4, IPv6), which keep student code off it where no namespace does.
SYSCALLS = {"open_by_handle_at": 304, "name_to_handle_at": 303, "mount": 165, "umount2": 166, "pivot_root": 155,
            "unshare": 272, "setns": 308, "ptrace": 101, "keyctl": 250, "bpf": 321, "perf_event_open": 298,
            "init_module": 175, "kexec_load": 246, "shmget": 29, "msgget": 68, "semget": 64, "modify_ldt": 154}
UNPRIVILEGED = {"CapInh": "0" * 16, "CapPrm": "0" * 16, "CapEff": "0" * 16, "CapBnd": "0" * 16, "CapAmb": "0" * 16,
                "NoNewPrivs": "1", "Seccomp": "2"}


def assert_unprivileged(seen: dict) -> None:
    assert {key: seen[key] for key in UNPRIVILEGED} == UNPRIVILEGED
    assert seen["uid"] == sandbox.JAIL_UID and seen["uid"] >= sandbox.JAIL_UID_BASE and seen["groups"] == []
    assert seen["refused"] == {name: True for name in [*SYSCALLS, "core_pattern", "inet_socket", "inet6_socket"]}


@pytest.mark.skipif(os.uname().machine != "x86_64", reason="the system call numbers are x86-64's")
def test_the_probe_runs_student_code_as_an_unprivileged_user_the_filter_refuses_escapes(tmp_path):
    code = (f"SYSCALLS = {SYSCALLS!r}\n" + STATUS_READER + "open('seen.json', 'w').write(json.dumps(seen))")
    outcome, jail = run_in_jail(tmp_path, code, timeout=60)
    assert outcome.code == 0, (tmp_path / "log.txt").read_text()
    assert_unprivileged(json.loads((jail / "seen.json").read_text()))


def test_the_hidden_probes_are_no_file_in_the_jail_and_the_repository_is_read_only(tmp_path):
    hidden = paths.probes_file(ASSIGNMENT).read_text()
    judge = paths.ROOT / "course" / "grading" / "judge.py"
    code = f"""
import json, os, sys
def text(path):
    try:
        return open(path).read()
    except (OSError, UnicodeDecodeError):
        return None
found = [os.path.join(root, name) for root, dirs, files in os.walk("/")
         if not root.startswith(("/proc", "/sys", "/usr", "/dev", sys.prefix))
         for name in files if name.endswith(".py") and text(os.path.join(root, name)) == {hidden!r}]
try:
    open({str(judge)!r}, "a").write("# the student's judge")
    wrote = True
except OSError:
    wrote = False
json.dump({{"found": found, "stdin": sys.stdin.read(), "wrote_judge": wrote}}, open("seen.json", "w"))
"""
    outcome, jail = run_in_jail(tmp_path, code, timeout=60)
    assert outcome.code == 0, (tmp_path / "log.txt").read_text()
    seen = json.loads((jail / "seen.json").read_text())
    assert seen == {"found": [], "stdin": "", "wrote_judge": False}
    assert hidden.splitlines()[0] not in (tmp_path / "log.txt").read_text()
    assert "the student's judge" not in judge.read_text()


def test_a_process_student_code_leaves_running_dies_with_the_step(tmp_path):
    code = """
import subprocess, sys
subprocess.Popen([sys.executable, "-c", "import time; time.sleep(3); open('late.txt', 'w').write('still here')"],
                 start_new_session=True)
"""
    outcome, jail = run_in_jail(tmp_path, code, timeout=60)
    assert outcome.code == 0, (tmp_path / "log.txt").read_text()
    time.sleep(5)
    assert not (jail / "late.txt").exists()
    assert sandbox.jail_processes() == []


def confined_run(tmp_path: Path, code: str) -> dict:
    """`code` run as the jail's user without bubblewrap (a container that forbids namespaces), in a folder given to
    that user; what it wrote to seen.json."""
    folder = tmp_path / "jail"
    folder.mkdir()
    sandbox.give_to_jail(folder)
    permissions.make_passable(folder)
    home = sandbox.private_home(folder)
    command = sandbox.with_clean_environment(sandbox.confined([sys.executable, "-c", code], chdir=folder), home)
    outcome = sandbox.limited_run(command, timeout=60, log=tmp_path / "log.txt", env={**grading_env(), **SECRET})
    assert outcome.code == 0, (tmp_path / "log.txt").read_text()
    sandbox.reclaim(folder)
    return json.loads((folder / "seen.json").read_text())


@pytest.mark.skipif(os.uname().machine != "x86_64", reason="the system call numbers are x86-64's")
def test_without_namespaces_student_code_still_runs_unprivileged_and_filtered(tmp_path):
    seen = confined_run(tmp_path, f"SYSCALLS = {SYSCALLS!r}\n" + STATUS_READER + "json.dump(seen, open('seen.json', 'w'))")
    assert_unprivileged(seen)


def test_a_sealed_course_gives_the_jails_user_only_the_machinery(tmp_path):
    root = tmp_path / "course"
    for name, text in {"course/grading/judge.py": "JUDGE", "assignments/a/probes.py": "HIDDEN",
                       "source/a/a.ipynb": "SOLUTION", "gradebook.db": "GRADES", "build/results/a/s.json": "RECORD"}.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text)
    for path in [root, *root.rglob("*")]:  # as a clone leaves them: readable by all
        path.chmod(0o755 if path.is_dir() else 0o644)
    names = ["course/grading/judge.py", "assignments/a/probes.py", "source/a/a.ipynb", "gradebook.db",
             "build/results/a/s.json"]
    code = (f"import json, os\nroot = {str(root)!r}\nseen = {{}}\n"
            f"for name in {names!r}:\n"
            "    try:\n        seen[name] = open(os.path.join(root, name)).read()\n"
            "    except OSError:\n        seen[name] = 'refused'\n"
            "    try:\n        open(os.path.join(root, name), 'a').write('x')\n        seen[name] += ', written'\n"
            "    except OSError:\n        pass\n"
            "json.dump(seen, open('seen.json', 'w'))")
    sandbox.seal_course(root, root, root / "build")
    seen = confined_run(tmp_path, code)
    assert seen == {"course/grading/judge.py": "JUDGE", **{name: "refused" for name in names[1:]}}


FRAME_THIEF = """
import sys
_frame, _found = sys._getframe(), ""
while _frame is not None:  # the hidden probes' source, wherever the probe process holds it
    for _value in list(_frame.f_locals.values()):
        if isinstance(_value, bytes) and b"PROBES" in _value:
            _found = _value.decode()
    _frame = _frame.f_back
raise ValueError(_found[:300])
"""


def test_what_student_code_reads_of_the_hidden_probes_in_memory_is_not_quoted_back(tmp_path):
    """The hidden probes are in the probe's memory, where student code runs: a cell that finds them and raises them
    as its error has its error named to the student, not quoted."""
    from bad_submissions import solution_with
    from course.grading.checking import probe_step
    from course.grading.record import new_record

    folder = tmp_path / "submission"
    solution_with(FRAME_THIEF)(folder)
    record = new_record(ASSIGNMENT, "thief", folder)
    assert probe_step(record, folder, tmp_path / "jail")
    first_line = paths.probes_file(ASSIGNMENT).read_text().splitlines()[0]
    raw = json.loads((tmp_path / "jail" / probe.REPORT).read_text())["cell_errors"]
    assert first_line in " ".join(raw.values()), "the attack found the probes: the test would prove nothing otherwise"
    told = " ".join(record.messages)
    assert "raised ValueError on the grader's run" in told and first_line not in told


def test_without_namespaces_student_code_has_a_home_of_its_own_not_the_shared_tmp(tmp_path):
    """Where there is no private /tmp, a grading's IPython and matplotlib folders and temporary files are its own:
    a startup file one grading leaves there cannot run in the next."""
    seen = confined_run(tmp_path, "import json, os, tempfile\njson.dump({name: os.environ[name] for name in ('HOME', "
                        "'IPYTHONDIR', 'MPLCONFIGDIR')} | {'tmp': tempfile.gettempdir()}, open('seen.json', 'w'))")
    home = sandbox.home_beside(tmp_path / "jail")
    assert all(Path(value).is_relative_to(home) for value in seen.values()), seen


def test_a_folder_that_only_looks_like_a_stale_grading_is_left_alone_and_crashes_nothing():
    """Any account may make /tmp/ck-<huge number>-x: the sweep neither fails on the number nor removes what it
    did not make."""
    huge = Path(tempfile.mkdtemp(prefix=f"{sandbox.SOCKETS_PREFIX}{10**20}-", dir="/tmp"))
    try:
        assert not sandbox.alive(10**20)
        assert huge in sandbox.remove_stale_socket_folders(), "a gone grading's folder of this user is removed"
        os.makedirs(huge)
        os.chown(huge, 12345, 12345)  # another account's
        assert huge not in sandbox.remove_stale_socket_folders() and huge.exists()
    finally:
        shutil.rmtree(huge, ignore_errors=True)


@pytest.mark.parametrize("code, limit", [
    ("import time\nfor i in range(40):\n    open(f'part{i}', 'wb').write(b'x' * 2**20)\n    time.sleep(0.1)", "DISK_MB"),
    ("import time\nfor i in range(3000):\n    open(f'f{i}', 'w').close()\n    time.sleep(0.001)", "MAX_FILES"),
])
def test_a_step_that_fills_its_folders_past_the_disk_limit_is_stopped(tmp_path, monkeypatch, code, limit):
    monkeypatch.setattr(limits_module, limit, 8 if limit == "DISK_MB" else 500)
    outcome, _ = run_in_jail(tmp_path, code, timeout=60, watch=[tmp_path / "sandbox"])
    assert outcome.over_disk and outcome.code != 0 and outcome.seconds < 30
