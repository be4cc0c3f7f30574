"""Limits for running student code: a wall clock, memory and process caps, and a filesystem jail.

- `limited_run` runs a command in its own process group and cgroups (v1
  memory and pids controllers, when this machine lets root create them):
  past the memory cap the kernel kills it, a fork bomb stops at the process
  cap, and at the time limit the whole group is killed.
- `jail` wraps a command in bubblewrap: no network, a read-only view of the
  system and of the Python install, and write access to one folder only.
  What is not bound in (source/, the checks' reference data, other
  submissions, the gradebook) does not exist inside.
- `confined` starts a command as the jail's user (course.grading.confine): an
  unprivileged uid of its own for each grading, no capabilities,
  no_new_privs, a seccomp filter. Inside bubblewrap's namespaces, and on its
  own where a container forbids them; then `seal_course` leaves that uid
  nothing of the course to read but the machinery and its own folders.
"""

from __future__ import annotations

import ctypes
import functools
import os
import re
import shutil
import signal
import stat
import subprocess
import sys
import time
import uuid
from collections.abc import Container
from dataclasses import dataclass
from pathlib import Path

from course import paths
from course.permissions import give_to_root, make_passable, make_readable, share_only
from course.grading import limits
from course.grading.confine import CONNECTION_PLACEHOLDER, compiled_filter

CGROUP_ROOT = Path("/sys/fs/cgroup")
CONFINE = Path(__file__).with_name("confine.py")
CONFINE_IN_JAIL = Path("/course-confine.py")  # where a jail sees it (the course's folders are not there)
# Student code runs as a uid that owns nothing of the course: by default one of its own for each grading (this
# process's), so two gradings at once never share a user; COURSE_JAIL_UID fixes it (a container grading one).
MEMORY_FILLED = 0.9  # a command whose memory reached this share of its limit filled it (the rest is the kernel's)
JAIL_UID_BASE = 1_500_000_000
JAIL_UID = int(os.environ.get("COURSE_JAIL_UID") or JAIL_UID_BASE + os.getpid())


def grading_env() -> dict[str, str]:
    """The environment of grading steps: the venv's tools first, and `course` importable."""
    return {**os.environ, "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}",
            "PYTHONPATH": str(paths.ROOT)}


@dataclass
class Outcome:
    """How a limited command ended."""

    code: int | None  # exit code, None if it was killed at the time limit
    seconds: float
    out_of_memory: bool = False
    over_disk: bool = False  # killed for writing more than limits.DISK_MB or limits.MAX_FILES in its folders
    memory_filled: bool = False  # its memory reached MEMORY_FILLED of its limit at some point (killed for it or not)

    @property
    def timed_out(self) -> bool:
        return self.code is None


class _Cgroups:
    """A memory and a pids cgroup (v1) for one command; removed afterwards. Absent if not permitted."""

    def __init__(self, memory_mb: int, max_processes: int):
        name = f"course-{uuid.uuid4().hex[:12]}"
        self.dirs: list[Path] = []
        for controller, settings in (("memory", {"memory.limit_in_bytes": memory_mb * 2**20,
                                                 "memory.memsw.limit_in_bytes": memory_mb * 2**20}),
                                     ("pids", {"pids.max": max_processes})):
            folder = CGROUP_ROOT / controller / name
            try:
                folder.mkdir()
            except OSError:
                continue
            self.dirs.append(folder)
            for key, value in settings.items():
                try:
                    (folder / key).write_text(str(value))
                except OSError:  # memsw needs swap accounting; the plain limit still holds
                    pass

    def enter_command(self, cmd: list[str]) -> list[str]:
        """`cmd`, started from a shell that first moves itself into the cgroups."""
        if not self.dirs:
            return cmd
        moves = "; ".join(f"echo $$ > {folder / 'cgroup.procs'}" for folder in self.dirs)
        return ["/bin/sh", "-c", f'{moves}; exec "$@"', "sh", *cmd]

    def out_of_memory(self) -> bool:
        """True if the kernel killed a process of this command for using too much memory."""
        for folder in self.dirs:
            control = folder / "memory.oom_control"
            if control.exists():
                fields = dict(line.split() for line in control.read_text().splitlines() if line.strip())
                if int(fields.get("oom_kill", 0)) > 0:
                    return True
        return False

    def memory_filled(self) -> bool:
        """True if the command's memory reached MEMORY_FILLED of its limit at some point."""
        for folder in self.dirs:
            peak, limit = folder / "memory.max_usage_in_bytes", folder / "memory.limit_in_bytes"
            if peak.exists() and int(peak.read_text()) >= MEMORY_FILLED * int(limit.read_text()):
                return True
        return False

    def remove(self) -> None:
        for folder in self.dirs:
            procs = folder / "cgroup.procs"
            for pid in procs.read_text().split() if procs.exists() else []:
                try:
                    os.kill(int(pid), signal.SIGKILL)
                except ProcessLookupError:
                    pass
            for _ in range(50):  # killed processes leave the cgroup once the kernel has reaped them
                try:
                    folder.rmdir()
                    break
                except OSError:
                    time.sleep(0.1)


_PR_SET_PDEATHSIG = 1
_prctl = ctypes.CDLL(None, use_errno=True).prctl  # looked up here: a forked child must not load libraries


def die_with_parent() -> None:
    """(preexec_fn) Have the kernel kill this child when its parent dies: a killed grader leaves nothing running."""
    _prctl(_PR_SET_PDEATHSIG, signal.SIGKILL)


# Run first in every process that runs student code (nbgrader's kernel, the probe): no forked children.
# os.fork raises, so a fork bomb is an ordinary error in its cell, the same on both paths; a child
# forked another way (posix.fork) exits at once, and the process cap stops the loop. subprocess still
# works (it does not go through os.fork); multiprocessing's fork does not. Self-contained code: the
# kernel's jail holds no course package to import it from.
FORK_REFUSAL = "os.fork is disabled while grading: the grader runs no child processes"
FORBID_FORK = f"""
import os as _os
def _no_fork(*args, **kwargs):
    raise PermissionError({FORK_REFUSAL!r})
_os.fork = _no_fork
_os.register_at_fork(after_in_child=lambda _exit=_os._exit: _exit(70))
del _os, _no_fork
"""


def forbid_fork() -> None:
    """Apply FORBID_FORK to this process."""
    exec(FORBID_FORK, {})


WATCH_INTERVAL_S = 1.0  # how often the folders student code writes in are measured


def disk_use(folders: list[Path]) -> tuple[int, int]:
    """(bytes on disk, entries) under `folders`, walked by descriptor without following links (student code may
    change them meanwhile)."""
    used = entries = 0
    for folder in folders:
        try:
            for _, dirs, files, top in os.fwalk(folder, follow_symlinks=False):
                for name in dirs + files:
                    try:
                        used += os.stat(name, dir_fd=top, follow_symlinks=False).st_blocks * 512
                    except OSError:
                        pass
                entries += len(dirs) + len(files)
        except OSError:
            pass
        except RecursionError:  # folders nested deeper than Python's stack: past every limit
            return TOO_DEEP, TOO_DEEP
    return used, entries


TOO_DEEP = 2**62  # the disk use `disk_use` gives a tree too deep to walk: more than any limit


def remove_tree(folder: Path) -> None:
    """Remove `folder` and all in it, however deep (rm's walk has no depth limit, unlike shutil.rmtree's recursion),
    without following a link or leaving this file system; nothing if it is not there."""
    if os.path.lexists(folder):
        subprocess.run(["rm", "-rf", "--one-file-system", "--", str(folder)], check=False)


def limited_run(cmd: list[str], *, timeout: float, log: Path, env: dict | None = None, cwd: Path | None = None,
                memory_mb: int = limits.MEMORY_MB, max_processes: int = limits.MAX_PROCESSES,
                stdin: Path | None = None, watch: list[Path] = ()) -> Outcome:
    """Run `cmd` with its output in `log`, under the time, memory and process limits; `stdin`, a file it reads
    (and no other process of it can open). The `watch` folders (where it writes) are measured every
    WATCH_INTERVAL_S: past limits.DISK_MB or limits.MAX_FILES in all, it is killed (`over_disk`)."""
    cgroups = _Cgroups(memory_mb, max_processes)
    start = time.perf_counter()
    deadline = time.monotonic() + timeout
    over_disk = False
    try:
        with log.open("w") as out, (stdin.open("rb") if stdin else open(os.devnull, "rb")) as given:
            process = subprocess.Popen(cgroups.enter_command(cmd), stdin=given, stdout=out, stderr=subprocess.STDOUT,
                                       env=env, cwd=cwd, start_new_session=True, preexec_fn=die_with_parent)
            try:
                code: int | None = None
                while code is None and time.monotonic() < deadline:
                    try:
                        code = process.wait(timeout=min(WATCH_INTERVAL_S if watch else timeout,
                                                        max(0.0, deadline - time.monotonic())))
                    except subprocess.TimeoutExpired:
                        used, entries = disk_use(list(watch)) if watch else (0, 0)
                        if used > limits.DISK_MB * 2**20 or entries > limits.MAX_FILES:
                            over_disk, code = True, -signal.SIGKILL
            finally:  # also on Ctrl-C: nothing it started outlives it
                try:
                    os.killpg(process.pid, signal.SIGKILL)  # whatever it left behind
                except ProcessLookupError:
                    pass
                process.wait()
                kill_jail_processes()  # and what left the group (a new session), where no cgroup holds it
        return Outcome(code, round(time.perf_counter() - start, 2), out_of_memory=cgroups.out_of_memory(),
                       over_disk=over_disk, memory_filled=cgroups.memory_filled())
    finally:
        cgroups.remove()


def remove_stale_cgroups(older_than_s: float = 3600) -> None:
    """Remove the empty cgroups left by grading steps that were killed (kill -9) before cleaning up."""
    for controller in ("memory", "pids"):
        for folder in (CGROUP_ROOT / controller).glob("course-*"):
            try:
                if time.time() - folder.stat().st_mtime > older_than_s and not (folder / "cgroup.procs").read_text():
                    folder.rmdir()
            except OSError:
                pass


def bubblewrap() -> str | None:
    """The bwrap executable, or None if this machine has none."""
    return shutil.which("bwrap")


def bubblewrap_works() -> bool:
    """True if bubblewrap can make its namespaces here (a container may forbid them)."""
    if bubblewrap() is None:
        return False
    trial = ["bwrap", "--ro-bind", "/", "/", "--unshare-net", "--unshare-pid", "--proc", "/proc", "--dev", "/dev", "true"]
    return subprocess.run(trial, capture_output=True).returncode == 0


def jail_environment() -> dict[str, str]:
    """The only variables student code sees: the grader's own (tokens, secrets) stay outside. No GPU is visible (the
    notebook, and the probes after it, run on the CPU, where the reference data were computed)."""
    passed = {name: os.environ[name] for name in limits.JAIL_VARIABLES if name in os.environ}
    return {**passed, "HOME": "/tmp", "MPLCONFIGDIR": "/tmp/matplotlib", "IPYTHONDIR": "/tmp/ipython",
            "CUDA_VISIBLE_DEVICES": ""}


def confined(cmd: list[str], *, chdir: Path | None = None, connection: str | None = None,
             confine: Path = CONFINE) -> list[str]:
    """`cmd` started as the jail's user (course.grading.confine, found at `confine`), in `chdir`; `connection`, a
    file only root reads, handed to `cmd` as a private copy where it says confine.CONNECTION_PLACEHOLDER."""
    return [sys.executable, "-I", str(confine), "--uid", str(JAIL_UID), "--gid", str(JAIL_UID),
            "--seccomp", seccomp_program(),
            "--max-file-mb", str(limits.FILE_MB), "--max-processes", str(limits.MAX_PROCESSES),
            *(["--chdir", str(chdir)] if chdir else []),
            *(["--connection", connection] if connection else []), "--", *cmd]


@functools.cache
def seccomp_program() -> str:
    """The jail's seccomp filter (course.grading.confine.compiled_filter), in hexadecimal, compiled once here."""
    return compiled_filter().hex()


def with_clean_environment(cmd: list[str], home: Path, setenv: dict[str, str] | None = None) -> list[str]:
    """`cmd` with only `jail_environment()` and `setenv`, where no bubblewrap clears the environment and gives a
    private /tmp: its home, IPython's and matplotlib's folders and its temporary files in `home` (see `private_home`),
    never in the machine's shared /tmp, where one grading could leave code for the next to run."""
    variables = {**jail_environment(), "HOME": str(home), "IPYTHONDIR": str(home / "ipython"),
                 "MPLCONFIGDIR": str(home / "matplotlib"), "TMPDIR": str(home / "tmp"), **(setenv or {})}
    return ["/usr/bin/env", "-i", *(f"{name}={value}" for name, value in variables.items()), *cmd]


def jail(cmd: list[str], *, workdir: Path, workdir_source: Path | None = None, writable: list[Path] = (),
         readable: list[Path] = (), setenv: dict[str, str] | None = None, connection: str | None = None) -> list[str]:
    """`cmd` inside bubblewrap as the jail's user (`confined`): no network, read-only system and Python, write access
    to `workdir` only.

    `workdir_source`, if given, is the folder bound at `workdir` (the code sees its files at `workdir`,
    and its writes land in `workdir_source`); `writable` folders are bound read-write too, `readable`
    files and folders read-only (bound in that order: a writable folder may lie in a readable one).
    /tmp is a fresh tmpfs. The environment is `jail_environment()` and `setenv` only.
    """
    python_home = Path(sys.base_prefix)
    # Own pid namespace: the code sees and can signal only its own processes, and cannot reach other
    # processes' files through /proc/PID/root. ipykernel would take the namespace's init for a dead parent
    # and exit, so it is not told its parent's pid (JPY_PARENT_PID is not passed); --die-with-parent does that job.
    args = ["bwrap", "--unshare-net", "--unshare-ipc", "--unshare-uts", "--unshare-pid", "--die-with-parent",
            "--new-session", "--clearenv", "--proc", "/proc", "--dev", "/dev", "--perms", "1777", "--tmpfs", "/tmp"]
    system = [Path(folder) for folder in SYSTEM_FOLDERS if Path(folder).exists()]
    binds = ([("--ro-bind", path, path) for path in (*system, python_home, Path(sys.prefix), *readable)] +
             [("--ro-bind", CONFINE, CONFINE_IN_JAIL)] +
             [("--bind", workdir_source or workdir, workdir)] + [("--bind", folder, folder) for folder in writable])
    for folder in folders_to_make([destination for _, _, destination in binds], bound=system):
        args += ["--perms", "0755", "--dir", str(folder)]  # (bubblewrap makes them 0700: the jail's user could not pass)
    for option, source, destination in binds:
        args += [option, str(source), str(destination)]
    args += ["--chdir", str(workdir)]
    for name, value in {**jail_environment(), **(setenv or {})}.items():
        args += ["--setenv", name, value]
    return args + confined(cmd, connection=connection, confine=CONFINE_IN_JAIL)


SYSTEM_FOLDERS = ("/usr", "/bin", "/lib", "/lib64", "/etc")  # bound read-only into every jail


def folders_to_make(destinations: list[Path], bound: list[Path]) -> list[Path]:
    """The folders above `destinations`, outermost first, but / and /tmp (made already) and those in `bound`."""
    folders: list[Path] = []
    for destination in destinations:
        for folder in reversed(Path(destination).parents):
            if folder not in (Path("/"), Path("/tmp"), *folders) and not any(b == folder or b in folder.parents
                                                                             for b in bound):
                folders.append(folder)
    return folders


def home_beside(folder: Path) -> Path:
    """The private home of the confined command that works in the jail folder `folder` (where no bubblewrap gives a
    private /tmp): a folder beside it."""
    return folder.with_name(folder.name + "-home")


def private_home(folder: Path) -> Path:
    """A new, empty `home_beside(folder)`, the jail user's."""
    home = home_beside(folder)
    remove_tree(home)
    (home / "tmp").mkdir(parents=True)
    give_to_jail(home)
    return home


def give_to_jail(folder: Path) -> None:
    """Make `folder` (made by the grader: no student has written in it yet) and all in it the jail user's, and the
    folders above it passable (where no bubblewrap binds it in)."""
    if os.geteuid() != 0:
        return
    make_passable(folder)
    for path in [folder, *folder.rglob("*")]:
        os.lchown(path, JAIL_UID, JAIL_UID)
    folder.chmod(0o700)


def reclaim(folder: Path) -> None:
    """Once no process of the jail's user is left: `folder`, where student code wrote, back to root (give_to_root: by
    descriptor, no link followed), readable by root alone at its top (so that a later jail user, given the same
    number, finds nothing of this one's)."""
    if os.geteuid() != 0 or not folder.is_dir() or folder.is_symlink():
        return
    try:
        give_to_root(folder)
    except RecursionError:  # folders nested deeper than a walk can go: its folders go, its files stay
        for entry in os.scandir(folder):
            if entry.is_dir(follow_symlinks=False):
                remove_tree(Path(entry.path))
        give_to_root(folder)
    os.lchown(folder, 0, 0)
    folder.chmod(0o700)


def jail_processes(uids: Container[int] = (JAIL_UID,)) -> list[int]:
    """The pids of the processes running as one of `uids` (this grading's jail user by default)."""
    found = []
    for entry in Path("/proc").iterdir():
        try:
            if entry.name.isdigit() and entry.stat().st_uid in uids:
                found.append(int(entry.name))
        except OSError:
            pass
    return found


def kill_jail_processes() -> None:
    """Kill every process of the jail's user (only this grading's: the uid is its own, or the container's one
    grading's), from a child that takes that uid: kill(-1) then reaches all of them, and none it forks escapes; and
    remove what it left in /dev/shm."""
    if os.geteuid() != 0 or JAIL_UID == 0:
        return
    for leftover in Path("/dev/shm").iterdir() if Path("/dev/shm").is_dir() else []:
        try:
            if leftover.lstat().st_uid == JAIL_UID:
                leftover.unlink()
        except OSError:
            pass
    for _ in range(10):
        if not jail_processes():
            return
        child = os.fork()
        if child == 0:
            try:
                os.setresgid(JAIL_UID, JAIL_UID, JAIL_UID)
                os.setresuid(JAIL_UID, JAIL_UID, JAIL_UID)
                os.kill(-1, signal.SIGKILL)
            finally:
                os._exit(0)
        os.waitpid(child, 0)
        time.sleep(0.05)


def open_machinery() -> None:
    """Make the machinery (course/) readable by the jail's user, which runs it: a course unpacked or cloned under a
    private umask leaves it the owner's alone."""
    make_readable(paths.ROOT / "course")


def seal_course(root: Path = paths.ROOT, course: Path = paths.COURSE, build: Path = paths.BUILD) -> None:
    """Where student code runs without bubblewrap's namespaces, the jail's user must find nothing of the course but
    the machinery it runs (course/, the Python install) and the build area's jail folders: everything else of the
    repository `root`, the course directory `course` and the build area `build` is made private to its owner
    (course.permissions), and the folders above those three passable. The assignments' hidden parts, source/, the gradebook, the records and the
    other students' files are then closed to it, as they are absent inside bubblewrap."""
    needed = [root / "course", Path(sys.prefix), build / JAIL_FOLDER]
    needed[-1].mkdir(parents=True, exist_ok=True)
    needed[-1].chmod(0o711)
    for path in needed:
        make_passable(path)
    for top in dict.fromkeys((root, course, build)):
        share_only(top, needed)
    root.chmod(0o755)  # Python finds the course package by listing the folder it is in: its names are no secret


JAIL_FOLDER = "jail"  # in the build area: the folders student code writes in, one per grading


SOCKETS_PREFIX = "ck-"  # /tmp/ck-<pid of the grading>-...: a jailed kernel's sockets


def alive(pid: int) -> bool:
    """Whether process `pid` exists on this machine (another user's too); a number no pid can be is no process."""
    try:
        os.kill(pid, 0)
    except (ProcessLookupError, OverflowError, ValueError):
        return False
    except PermissionError:  # another user's process
        return True
    return True


def remove_folders_of_gone_processes(where: Path, owner: re.Pattern) -> list[Path]:
    """Remove the folders in `where` whose name `owner` matches, with the pid of the process that made them as
    its first group, where that process is gone; those of live processes stay, and so does anything this user did
    not make. Returns the removed."""
    removed = []
    for folder in where.iterdir():
        found = owner.match(folder.name)
        try:
            info = folder.lstat()
        except OSError:
            continue
        if not (stat.S_ISDIR(info.st_mode) and info.st_uid == os.geteuid()):
            continue  # another account's (a student's, made to look like ours), or a link
        if found and not alive(int(found.group(1))):
            remove_tree(folder)
            removed.append(folder)
    return removed


def remove_stale_socket_folders() -> list[Path]:
    """Remove the socket folders of gradings that are gone (one killed mid-run leaves its folder: a kernel_jail's
    caller removes it only when nbgrader returns); those of live gradings stay. Returns the removed."""
    return remove_folders_of_gone_processes(Path("/tmp"), re.compile(re.escape(SOCKETS_PREFIX) + r"(\d+)-"))


def kernel_jail(kernels_dir: Path, *, workdir: Path, scratch: Path, probe_dir: Path,
                namespaces: bool = True) -> tuple[list[str], dict[str, str], Path]:
    """A jailed Jupyter kernel for nbgrader: (nbgrader options, environment, folder to remove afterwards).

    Writes the kernelspec `course-sandbox` under `kernels_dir`/kernels. The kernel runs as the jail's user in
    `workdir` (nbgrader's autograded folder of the submission) but sees `scratch` there, a copy the grader made
    and gave that user: what student code writes or links lands in `scratch`, never in a folder nbgrader writes to.
    After the notebook the probes run in it (course.grading.probe.kernel_request), with the machinery (course/) to
    read and `probe_dir` to write their data in.
    With `namespaces` (bubblewrap) it can read nothing else of the course: no checks, no hidden probes, no other
    submission,
    and talks to nbgrader over IPC sockets in a short folder under /tmp (socket paths are limited to about 100
    characters): the connection file, root's, in that folder, the sockets in its `ipc` folder, the jail user's.
    Without, it runs in `scratch` itself on a sealed course (`seal_course`), with a home of its own beside it,
    over the same sockets. Either way the connection file reaches the kernel as a private copy
    (course.grading.confine). Interrupts (nbgrader's per-cell timeout) travel as messages: a signal would stop
    bubblewrap, and the kernel with it.
    """
    import json
    import tempfile

    kernel = [sys.executable, "-m", "ipykernel_launcher", "-f", CONNECTION_PLACEHOLDER,
              f"--IPKernelApp.exec_lines={FORBID_FORK}"]
    give_to_jail(scratch)
    give_to_jail(probe_dir)
    remove_stale_socket_folders()
    sockets = Path(tempfile.mkdtemp(prefix=f"{SOCKETS_PREFIX}{os.getpid()}-", dir="/tmp"))
    sockets.chmod(0o711)
    (sockets / "ipc").mkdir()
    give_to_jail(sockets / "ipc")
    if namespaces:
        argv = jail(kernel, workdir=workdir, workdir_source=scratch, readable=[sockets, paths.ROOT / "course"],
                    writable=[sockets / "ipc", probe_dir], connection="{connection_file}")
    else:
        home = private_home(scratch)
        argv = with_clean_environment(confined(kernel, chdir=scratch, connection="{connection_file}"), home)
    options = ["--KernelManager.transport=ipc", f"--KernelManager.ip={sockets}/ipc/kernel",
               f"--KernelManager.connection_file={sockets}/connection.json"]
    spec = kernels_dir / "kernels" / "course-sandbox"
    spec.mkdir(parents=True, exist_ok=True)
    (spec / "kernel.json").write_text(json.dumps({"argv": argv, "display_name": "Python 3 (sandboxed)",
                                                  "language": "python", "interrupt_mode": "message"}, indent=1))
    return ["--Execute.kernel_name=course-sandbox", *options], {"JUPYTER_PATH": str(kernels_dir)}, sockets
