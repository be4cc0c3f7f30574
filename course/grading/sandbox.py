"""Limits for running student code: a wall clock, memory and process caps, and a filesystem jail.

- `limited_run` runs a command in its own process group and cgroups (v1
  memory and pids controllers, when this machine lets root create them):
  past the memory cap the kernel kills it, a fork bomb stops at the process
  cap, and at the time limit the whole group is killed.
- `jail` wraps a command in bubblewrap: no network, a read-only view of the
  system and of the Python install, and write access to one folder only.
  What is not bound in (source/, the checks' reference data, other
  submissions, the gradebook) does not exist inside.
"""

from __future__ import annotations

import ctypes
import os
import re
import shutil
import signal
import subprocess
import sys
import time
import uuid
from dataclasses import dataclass
from pathlib import Path

from course.grading import limits

CGROUP_ROOT = Path("/sys/fs/cgroup")


@dataclass
class Outcome:
    """How a limited command ended."""

    code: int | None  # exit code, None if it was killed at the time limit
    seconds: float
    out_of_memory: bool = False

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
FORBID_FORK = """
import os as _os
def _no_fork(*args, **kwargs):
    raise PermissionError("os.fork is disabled while grading: the grader runs no child processes")
_os.fork = _no_fork
_os.register_at_fork(after_in_child=lambda _exit=_os._exit: _exit(70))
del _os, _no_fork
"""


def forbid_fork() -> None:
    """Apply FORBID_FORK to this process."""
    exec(FORBID_FORK, {})


def limited_run(cmd: list[str], *, timeout: float, log: Path, env: dict | None = None, cwd: Path | None = None,
                memory_mb: int = limits.MEMORY_MB, max_processes: int = limits.MAX_PROCESSES) -> Outcome:
    """Run `cmd` with its output in `log`, under the time, memory and process limits."""
    cgroups = _Cgroups(memory_mb, max_processes)
    start = time.perf_counter()
    try:
        with log.open("w") as out:
            process = subprocess.Popen(cgroups.enter_command(cmd), stdout=out, stderr=subprocess.STDOUT, env=env,
                                       cwd=cwd, start_new_session=True, preexec_fn=die_with_parent)
            try:
                code: int | None = process.wait(timeout=timeout)
            except subprocess.TimeoutExpired:
                code = None
            finally:  # also on Ctrl-C: nothing it started outlives it
                try:
                    os.killpg(process.pid, signal.SIGKILL)  # whatever it left behind
                except ProcessLookupError:
                    pass
                process.wait()
        return Outcome(code, round(time.perf_counter() - start, 2), out_of_memory=cgroups.out_of_memory())
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
    """The only variables student code sees: the grader's own (tokens, secrets) stay outside."""
    passed = {name: os.environ[name] for name in limits.JAIL_VARIABLES if name in os.environ}
    return {**passed, "HOME": "/tmp", "MPLCONFIGDIR": "/tmp/matplotlib", "IPYTHONDIR": "/tmp/ipython"}


def jail(cmd: list[str], *, workdir: Path, workdir_source: Path | None = None, writable: list[Path] = (),
         readable: list[Path] = (), setenv: dict[str, str] | None = None) -> list[str]:
    """`cmd` inside bubblewrap: no network, read-only system and Python, write access to `workdir` only.

    `workdir_source`, if given, is the folder bound at `workdir` (the code sees its files at `workdir`,
    and its writes land in `workdir_source`); `writable` folders are bound read-write too, `readable`
    files and folders read-only.
    /tmp is a fresh tmpfs. The environment is `jail_environment()` and `setenv` only.
    """
    python_home = Path(sys.base_prefix)
    # Own pid namespace: the code sees and can signal only its own processes, and cannot reach other
    # processes' files through /proc/PID/root. ipykernel would take the namespace's init for a dead parent
    # and exit, so it is not told its parent's pid (JPY_PARENT_PID is not passed); --die-with-parent does that job.
    args = ["bwrap", "--unshare-net", "--unshare-ipc", "--unshare-uts", "--unshare-pid", "--die-with-parent",
            "--new-session", "--clearenv", "--proc", "/proc", "--dev", "/dev", "--tmpfs", "/tmp"]
    for system in ("/usr", "/bin", "/lib", "/lib64", "/etc"):
        if Path(system).exists():
            args += ["--ro-bind", system, system]
    for path in (python_home, Path(sys.prefix), *readable):
        args += ["--ro-bind", str(path), str(path)]
    args += ["--bind", str(workdir_source or workdir), str(workdir)]
    for folder in writable:
        args += ["--bind", str(folder), str(folder)]
    args += ["--chdir", str(workdir)]
    for name, value in {**jail_environment(), **(setenv or {})}.items():
        args += ["--setenv", name, value]
    return args + cmd


SOCKETS_PREFIX = "ck-"  # /tmp/ck-<pid of the grading>-...: a jailed kernel's sockets


def alive(pid: int) -> bool:
    """Whether process `pid` exists on this machine (another user's too)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # another user's process
        return True
    return True


def remove_folders_of_gone_processes(where: Path, owner: re.Pattern) -> list[Path]:
    """Remove the folders in `where` whose name `owner` matches, with the pid of the process that made them as
    its first group, where that process is gone; those of live processes stay. Returns the removed."""
    removed = []
    for folder in where.iterdir():
        found = owner.match(folder.name)
        if found and not alive(int(found.group(1))):
            shutil.rmtree(folder, ignore_errors=True)
            removed.append(folder)
    return removed


def remove_stale_socket_folders() -> list[Path]:
    """Remove the socket folders of gradings that are gone (one killed mid-run leaves its folder: a kernel_jail's
    caller removes it only when nbgrader returns); those of live gradings stay. Returns the removed."""
    return remove_folders_of_gone_processes(Path("/tmp"), re.compile(re.escape(SOCKETS_PREFIX) + r"(\d+)-"))


def kernel_jail(kernels_dir: Path, *, workdir: Path, scratch: Path) -> tuple[list[str], dict[str, str], Path]:
    """A jailed Jupyter kernel for nbgrader: (nbgrader options, environment, folder to remove afterwards).

    Writes the kernelspec `course-sandbox` under `kernels_dir`/kernels. The kernel runs in `workdir`
    (nbgrader's autograded folder of the submission) but sees `scratch` there, a copy the grader made:
    what student code writes or links lands in `scratch`, never in a folder nbgrader writes to. It can
    read nothing of the course: no checks, no probes, no other submission. It talks to nbgrader over
    IPC sockets in a short folder under /tmp (socket paths are limited to about 100 characters), where
    its connection file lies too. Interrupts (nbgrader's per-cell timeout) travel as messages: a signal
    would stop bubblewrap, and the kernel with it.
    """
    import json
    import tempfile

    remove_stale_socket_folders()
    sockets = Path(tempfile.mkdtemp(prefix=f"{SOCKETS_PREFIX}{os.getpid()}-", dir="/tmp"))
    kernel = [sys.executable, "-m", "ipykernel_launcher", "-f", "{connection_file}",
              f"--IPKernelApp.exec_lines={FORBID_FORK}"]
    argv = jail(kernel, workdir=workdir, workdir_source=scratch, writable=[sockets])
    spec = kernels_dir / "kernels" / "course-sandbox"
    spec.mkdir(parents=True, exist_ok=True)
    (spec / "kernel.json").write_text(json.dumps({"argv": argv, "display_name": "Python 3 (sandboxed)",
                                                  "language": "python", "interrupt_mode": "message"}, indent=1))
    options = ["--Execute.kernel_name=course-sandbox", "--KernelManager.transport=ipc",
               f"--KernelManager.ip={sockets}/kernel", f"--KernelManager.connection_file={sockets}/connection.json"]
    return options, {"JUPYTER_PATH": str(kernels_dir)}, sockets
