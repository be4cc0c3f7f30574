"""The hub's own authenticator and spawner (loaded by course/hub/jupyterhub_config.py, in the hub's process)."""

from __future__ import annotations

import asyncio
import hmac
import json
import os
import pwd
import resource
import shutil
from pathlib import Path

from jupyterhub.auth import Authenticator
from jupyterhub.spawner import LocalProcessSpawner, set_user_setuid
from traitlets import Dict, Integer, List, Unicode


class CoursePasswords(Authenticator):
    """Each account logs in with the password `make hub` gave it (a JSON file {user: password} only root reads).

    For a course on this machine: a real server uses an authenticator of its institution (LTI from the LMS, OAuth)."""

    passwords_file = Unicode(config=True, help="JSON {user: password}")
    any_allow_config = True  # check_allowed below: the accounts make hub made, read at each login

    def passwords(self) -> dict[str, str]:
        """The passwords file, read at each use: make hub adds to it while the hub runs."""
        return json.loads(Path(self.passwords_file).read_text())

    def check_allowed(self, username, authentication=None):
        """An account of the passwords file, so that a student `make hub` adds to a running hub can log in at once."""
        return username in self.passwords()

    async def authenticate(self, handler, data):
        expected = self.passwords().get(data["username"])
        if expected is not None and hmac.compare_digest(expected.encode(), data["password"].encode()):
            return data["username"]
        return None


def own_namespaces(tmp: Path, shared: list[str]) -> list[str]:
    """The command prefix that puts a student's server, and all it starts, in namespaces of its own (bubblewrap, run
    as the student: an unprivileged user namespace): its own pid namespace with its own /proc (the student sees no
    other account's processes, and nothing the server starts outlives it), its own System V IPC, its own /dev
    (a private /dev/shm) and `tmp` (a folder of the student's home) as /tmp and /var/tmp. The rest of the machine is
    seen as the account sees it outside, the network too (the proxy reaches the server on the loopback), and the
    `shared` paths (the venv, the exchange, the students' configuration) where they are, even under /tmp."""
    under_tmp = [path for path in shared if Path(path).is_relative_to("/tmp")]
    return [shutil.which("bwrap") or "bwrap", "--unshare-user", "--unshare-pid", "--unshare-ipc", "--die-with-parent",
            "--bind", "/", "/", "--proc", "/proc", "--dev", "/dev", "--bind", str(tmp), "/tmp", "--bind", str(tmp),
            "/var/tmp",
            *[arg for path in under_tmp for arg in ("--bind", path, path)], "--"]


HUB_MARK = "COURSE_HUB_SETTINGS"  # in the environment of the hub, its proxy and every server: its settings file
MEMORY_CGROUPS = Path("/sys/fs/cgroup/memory")  # cgroup v1's memory controller, which root may write here


class CourseSpawner(LocalProcessSpawner):
    """Students' servers run as their own Unix accounts, each in namespaces of its own (`own_namespaces`), with a
    limit on its memory, on the size of a file and on the account's processes. The instructor's runs as the account
    that owns the course directory (nbgrader's course directory is its instructor's own; never root: course.hub.serve
    refuses it), in the repository, so that formgrader and nbgrader's commands read the course's nbgrader_config.py."""

    instructor = Unicode(config=True, help="the instructor's hub user")
    owner = Unicode(config=True, help="the Unix account that owns the course directory")
    course_dir = Unicode(config=True)
    repository = Unicode(config=True, help="where nbgrader_config.py is")
    instructor_environment = Dict(config=True, help="environment of the instructor's server")
    student_environment = Dict(config=True, help="environment of a student's server")
    shared_paths = List(Unicode(), config=True, help="what every student's server reaches: the venv, the exchange, "
                                                     "their configuration")
    server_command = List(Unicode(), config=True, help="the server (jupyterhub-singleuser), which start() puts in "
                                                       "Spawner.cmd (a student's in own_namespaces)")
    student_file_mb = Integer(config=True, help="the largest file a student's server may write (RLIMIT_FSIZE)")
    student_memory_mb = Integer(config=True, help="the most memory a student's server and all it starts may use")
    student_processes = Integer(config=True, help="the most processes and threads of a student's account "
                                                  "(RLIMIT_NPROC)")

    @property
    def is_instructor(self) -> bool:
        return self.user.name == self.instructor

    @property
    def account(self) -> str:
        return self.owner if self.is_instructor else self.user.name

    @property
    def private_tmp(self) -> Path:
        """The student's /tmp, in their home."""
        return Path(pwd.getpwnam(self.user.name).pw_dir) / ".tmp"

    @property
    def memory_cgroup(self) -> Path:
        """The memory cgroup of the student's server (made when it starts, removed when it stops)."""
        return MEMORY_CGROUPS / f"coursehub-{self.user.name}"

    def limit_memory(self) -> Path | None:
        """The student's memory cgroup, made with its limit; None (and said in the hub's log) where this machine
        has no cgroup v1 memory controller that root may write."""
        try:
            self.memory_cgroup.mkdir(exist_ok=True)
            (self.memory_cgroup / "memory.limit_in_bytes").write_text(str(self.student_memory_mb * 2**20))
            return self.memory_cgroup
        except OSError as error:
            self.log.warning("%s's server runs without a memory limit: no cgroup v1 memory controller here (%s)",
                             self.user.name, error)
            return None

    def make_preexec_fn(self, name):
        if self.is_instructor:
            return set_user_setuid(self.owner, chdir=False)  # and Popen's cwd is the repository
        become_student = set_user_setuid(name)
        file_bytes, processes, tmp = self.student_file_mb * 2**20, self.student_processes, self.private_tmp
        enter = str(cgroup / "cgroup.procs") if (cgroup := self.limit_memory()) else None

        def preexec():
            if enter:  # (still root): the server and all it starts share the memory limit
                with open(enter, "w") as procs:
                    procs.write(str(os.getpid()))
            become_student()
            resource.setrlimit(resource.RLIMIT_FSIZE, (file_bytes, file_bytes))
            resource.setrlimit(resource.RLIMIT_NPROC, (processes, processes))
            os.makedirs(tmp, mode=0o700, exist_ok=True)  # as the student: a link they made leads where they may go

        return preexec

    async def _signal(self, sig):
        """A student's server: the signal goes to its whole process group, the namespace's init included, whose end
        ends every process in the namespace (bubblewrap alone would end and leave them)."""
        if self.is_instructor:
            return await super()._signal(sig)
        try:
            os.killpg(self.pid, sig)
        except ProcessLookupError:
            return False
        return True

    def user_env(self, env):
        account = pwd.getpwnam(self.account)
        env.update(USER=account.pw_name, HOME=account.pw_dir, SHELL=account.pw_shell)
        env.update(self.instructor_environment if self.is_instructor else self.student_environment)
        env[HUB_MARK] = os.environ[HUB_MARK]  # how make hub-clean finds every process this hub started
        if not self.is_instructor:  # JupyterLab keeps a student's layout and settings in their home, not in the
            lab = Path(account.pw_dir) / ".jupyter" / "lab"  # shared configuration folder they cannot write
            env.update(JUPYTERLAB_WORKSPACES_DIR=str(lab / "workspaces"), JUPYTERLAB_SETTINGS_DIR=str(lab / "user-settings"))
        return env

    def get_args(self):
        args = super().get_args()
        if self.is_instructor:
            args.append(f"--ServerApp.root_dir={self.course_dir}")  # formgrader wants the course inside it
            if self.owner == "root":
                args.append("--allow-root")
        return args

    async def stop(self, now=False):
        await super().stop(now)
        if self.is_instructor or not self.memory_cgroup.is_dir():
            return
        for _ in range(100):  # the namespace's processes leave the cgroup once the kernel has reaped them
            try:
                self.memory_cgroup.rmdir()
                return
            except OSError:
                await asyncio.sleep(0.1)
        self.log.warning("%s's memory cgroup %s is still in use", self.user.name, self.memory_cgroup)

    async def start(self):
        if self.is_instructor:
            self.popen_kwargs = {**self.popen_kwargs, "cwd": self.repository}
        self.cmd = (self.server_command if self.is_instructor else
                    [*own_namespaces(self.private_tmp, self.shared_paths), *self.server_command])
        return await super().start()
