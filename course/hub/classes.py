"""The hub's own authenticator and spawner (loaded by course/hub/jupyterhub_config.py, in the hub's process)."""

from __future__ import annotations

import hmac
import json
import pwd
from pathlib import Path

from jupyterhub.auth import Authenticator
from jupyterhub.spawner import LocalProcessSpawner, set_user_setuid
from traitlets import Dict, Unicode


class CoursePasswords(Authenticator):
    """Each account logs in with the password `make hub` gave it (a JSON file {user: password} only root reads).

    For a course on this machine: a real server uses an authenticator of its institution (LTI from the LMS, OAuth)."""

    passwords_file = Unicode(config=True, help="JSON {user: password}")

    async def authenticate(self, handler, data):
        expected = json.loads(Path(self.passwords_file).read_text()).get(data["username"])
        if expected is not None and hmac.compare_digest(expected.encode(), data["password"].encode()):
            return data["username"]
        return None


class CourseSpawner(LocalProcessSpawner):
    """Students' servers run as their own Unix accounts. The instructor's runs as the account that owns the course
    directory (nbgrader's course directory is its instructor's own), in the repository, so that formgrader and
    nbgrader's commands read the course's nbgrader_config.py."""

    instructor = Unicode(config=True, help="the instructor's hub user")
    owner = Unicode(config=True, help="the Unix account that owns the course directory")
    course_dir = Unicode(config=True)
    repository = Unicode(config=True, help="where nbgrader_config.py is")
    instructor_environment = Dict(config=True, help="environment of the instructor's server")
    student_environment = Dict(config=True, help="environment of a student's server")

    @property
    def is_instructor(self) -> bool:
        return self.user.name == self.instructor

    @property
    def account(self) -> str:
        return self.owner if self.is_instructor else self.user.name

    def make_preexec_fn(self, name):
        if self.is_instructor:
            return set_user_setuid(self.owner, chdir=False)  # and Popen's cwd is the repository
        return set_user_setuid(name)

    def user_env(self, env):
        account = pwd.getpwnam(self.account)
        env.update(USER=account.pw_name, HOME=account.pw_dir, SHELL=account.pw_shell)
        env.update(self.instructor_environment if self.is_instructor else self.student_environment)
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

    async def start(self):
        if self.is_instructor:
            self.popen_kwargs = {**self.popen_kwargs, "cwd": self.repository}
        return await super().start()
