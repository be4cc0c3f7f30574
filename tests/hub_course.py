"""A real JupyterHub serving a scratch course, for the hub's tests (tests/test_hub.py)."""

from __future__ import annotations

import contextlib
import json
import os
import re
import secrets
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
import requests
import websocket

from course import paths
from course.hub.serve import hub_processes
from course.permissions import make_passable, make_readable
from helpers import FIXTURE_ASSIGNMENTS, course_env, released_course, run

SUCCEEDED = re.compile(r" [123]0\d (GET|HEAD|POST|PUT|PATCH|DELETE) ")  # a request's line in the hub's log
FILE_MB = 64  # the largest file a student's server may write, in the tests' hub
MEMORY_MB = 768  # the memory of a student's server and all it starts (a server and a kernel use about 300 MB)
PROXY = paths.ROOT / "build" / "hub" / "node" / "node_modules" / ".bin" / "configurable-http-proxy"


def reachable_by_others(path: Path) -> bool:
    """Whether every folder down to `path` lets other accounts through, and the file or folder itself too."""
    return all(p.stat().st_mode & 0o001 for p in [path.resolve(), *path.resolve().parents])


NEEDS_HUB = [
    pytest.mark.skipif(os.geteuid() != 0, reason="the hub creates Unix accounts: root only"),
    pytest.mark.skipif(not reachable_by_others(Path(sys.executable)),
                       reason=f"the venv's Python ({Path(sys.executable).resolve()}) is out of other accounts' reach"),
    pytest.mark.skipif(not PROXY.exists(), reason="configurable-http-proxy is not installed: `make hub-tools`"),
]


def free_ports(count: int = 3) -> int:
    """The first of `count` consecutive free ports on the loopback."""
    for _ in range(50):
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            first = s.getsockname()[1]
        if first + count < 65536 and all(_free(first + i) for i in range(count)):
            return first
    raise RuntimeError("no free ports")


def _free(port: int) -> bool:
    with socket.socket() as s:
        try:
            s.bind(("127.0.0.1", port))
            return True
        except OSError:
            return False


class Hub:
    """The running hub, driven through its REST API with the tests' service token."""

    def __init__(self, root: Path, env: dict, port: int, token: str):
        self.root, self.env, self.port, self.token = root, env, port, token
        self.url = f"http://localhost:{port}"

    def user_url(self, user: str) -> str:
        """Where `user`'s server is: a host of its own (the hub's subdomain_host)."""
        return f"http://{user}.localhost:{self.port}"

    def request(self, method: str, path: str, **kwargs) -> requests.Response:
        """A request to the hub, or to a user's server for a path /user/<name>/... (sent to the loopback with that
        server's host: Python's resolver may not know <name>.localhost, browsers do)."""
        headers = {"Authorization": f"token {self.token}"}
        if user := re.match(r"/user/([^/]+)/", path):
            headers["Host"] = f"{user[1]}.localhost:{self.port}"
        response = requests.request(method, f"http://127.0.0.1:{self.port}{path}", headers=headers, timeout=120,
                                    **kwargs)
        response.raise_for_status()
        return response

    @property
    def state(self) -> Path:
        """The hub's state folder (course.hub.serve's STATE in the scratch course): passwords, the hub's log."""
        return self.root / "build" / "hub" / "state"

    def processes(self) -> list[int]:
        """The processes the hub started (the hub, its proxy, the servers)."""
        return hub_processes(self.state / "settings.json")

    def password(self, account: str) -> str:
        return json.loads((self.state / "passwords.json").read_text())[account]

    def contents(self, user: str, path: str, **kwargs) -> requests.Response:
        return self.request(kwargs.pop("method", "GET"), f"/user/{user}/api/contents/{path}", **kwargs)

    def log_tail(self, lines: int = 40) -> str:
        """The last `lines` of the hub's log (its own and every server's it started), successful requests left out."""
        log = self.state / "hub.log"
        if not log.exists():
            return f"(no {log})"
        told = [line for line in log.read_text(errors="replace").splitlines() if not SUCCEEDED.search(line)]
        return "\n".join(told[-lines:])

    def instructor(self, *args: str) -> str:
        """A course command the instructor runs as root (as docs/hub_instructor.md says)."""
        return run([sys.executable, "-m", *args], self.env)

    def start_server(self, user: str) -> None:
        """Start `user`'s server if it is not running, and wait until it is ready."""
        if not self.request("GET", f"/hub/api/users/{user}").json()["servers"]:
            self.request("POST", f"/hub/api/users/{user}/server")
        deadline = time.monotonic() + 120
        while not self.request("GET", f"/hub/api/users/{user}").json()["servers"].get("", {}).get("ready"):
            assert time.monotonic() < deadline, f"{user}'s server did not start:\n{self.log_tail()}"
            time.sleep(0.5)

    def stop_server(self, user: str) -> None:
        """Stop `user`'s server (as the hub's admin page does), once it is stopped."""
        self.request("DELETE", f"/hub/api/users/{user}/server")
        deadline = time.monotonic() + 60
        while self.request("GET", f"/hub/api/users/{user}").json()["servers"]:
            assert time.monotonic() < deadline, f"{user}'s server did not stop:\n{self.log_tail()}"
            time.sleep(0.5)

    def run_code(self, user: str, code: str) -> str:
        """What `code` prints, run in a new kernel of `user`'s server (started if need be), as a cell of theirs."""
        self.start_server(user)
        kernel = self.request("POST", f"/user/{user}/api/kernels", json={"name": "python3"}).json()["id"]
        socket = websocket.create_connection(f"ws://127.0.0.1:{self.port}/user/{user}/api/kernels/{kernel}/channels",
                                             host=f"{user}.localhost:{self.port}",
                                             header=[f"Authorization: token {self.token}"], timeout=120)
        try:
            request = {"msg_id": uuid.uuid4().hex, "msg_type": "execute_request", "username": user,
                       "session": uuid.uuid4().hex, "version": "5.3", "date": ""}
            socket.send(json.dumps({"header": request, "parent_header": {}, "metadata": {}, "channel": "shell",
                                    "content": {"code": code, "silent": False, "store_history": False,
                                                "user_expressions": {}, "allow_stdin": False, "stop_on_error": True},
                                    "buffers": []}))
            printed = []
            while True:
                message = json.loads(socket.recv())
                if message.get("parent_header", {}).get("msg_id") != request["msg_id"]:
                    continue
                if message["msg_type"] == "stream":
                    printed.append(message["content"]["text"])
                elif message["msg_type"] == "error":
                    printed.append("\n".join(message["content"]["traceback"]))
                elif message["msg_type"] == "status" and message["content"]["execution_state"] == "idle":
                    return "".join(printed)
        finally:
            socket.close()
            self.request("DELETE", f"/user/{user}/api/kernels/{kernel}")


@contextlib.contextmanager
def course_hub(prefix: str, roster: Path | None = None) -> Iterator[Hub]:
    """A hub serving a scratch course of the fixture assignment, owned by the account `prefix`teacher (make
    course-owner), with the students of `roster` (the sample roster.csv by default) as new accounts named `prefix` +
    id (any of that name an interrupted run left are removed first); everything it made is removed afterwards."""
    top = Path(tempfile.mkdtemp(prefix="course-hub-test-", dir="/tmp"))
    top.chmod(0o711)  # the students' servers pass through it to the venv and the exchange
    root = top / "course"
    shutil.copytree(FIXTURE_ASSIGNMENTS, root / "assignments")
    token = secrets.token_hex(16)
    env = {**course_env(root, root / "assignments"), "COURSE_HUB_PREFIX": prefix, "COURSE_HUB_PROXY": str(PROXY),
           "COURSE_HUB_SERVICE_TOKEN": token, "COURSE_HUB_FILE_MB": str(FILE_MB),
           "COURSE_HUB_MEMORY_MB": str(MEMORY_MB),
           **({"COURSE_ROSTER": str(roster)} if roster else {})}
    clean(env)  # accounts an interrupted run left (with what they fetched) would not start as a class starts
    released_course(root, env)
    (root / "gradebook.db").unlink()  # as a fresh clone has it: source/ and release/ committed, no gradebook
    readable_code()
    run([sys.executable, "-m", "course.hub.owner", owner_name(env)], env)
    port = free_ports()
    server = subprocess.Popen([sys.executable, "-m", "course.hub.serve", "--port", str(port)], cwd=paths.ROOT, env=env,
                              stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    try:
        first_line = server.stdout.readline()
        assert first_line.startswith("The course's hub: http://localhost"), first_line + server.stdout.read()
        yield Hub(root, env, port, token)
    finally:
        server.terminate()  # as make hub's Ctrl-C: the hub and every server stop
        try:
            server.wait(timeout=60)
        except subprocess.TimeoutExpired:
            server.kill()
        clean(env)
        shutil.rmtree(top, ignore_errors=True)


def owner_name(env: dict) -> str:
    return f"{env['COURSE_HUB_PREFIX']}teacher"


def readable_code() -> None:
    """The course's code readable by every account, as a clone made under the usual umask (022) has it: the course's
    owner runs it (this checkout may have been made private)."""
    make_passable(paths.ROOT / "course")
    make_readable(paths.ROOT / "course")
    (paths.ROOT / "nbgrader_config.py").chmod(0o644)


def clean(env: dict) -> None:
    """`make hub-clean` for the test's hub: its accounts, their homes and processes removed; and its owner."""
    run([sys.executable, "-m", "course.hub.clean"], env)
    subprocess.run(["userdel", "--remove", owner_name(env)], capture_output=True)


def as_account(account: str, *command: str, env: dict[str, str] | None = None,
               input: str | None = None) -> subprocess.CompletedProcess:
    """`command` as `account`, with the environment of a shell of its own (HOME, PATH, and `env`), as a student
    could run it in a terminal of their server (`input` on its standard input)."""
    own = {"HOME": f"/home/{account}", "PATH": "/usr/local/bin:/usr/bin:/bin", "LANG": "C.UTF-8", **(env or {})}
    return subprocess.run(["runuser", "-u", account, "--", "env", "-i", *(f"{k}={v}" for k, v in own.items()), *command],
                          capture_output=True, text=True, cwd="/", umask=0o022, input=input)  # a login shell's
