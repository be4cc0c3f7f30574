"""Serve the course on a JupyterHub on this machine: the roster's students log in, fetch, work and submit in
JupyterLab; the instructor's server has formgrader.

    python -m course.hub.serve [--port 8000]        (make hub; Ctrl-C stops the hub and every server)

As root (it creates the students' Unix accounts): the accounts of roster.csv (course.hub.accounts), a password
each (kept in build/hub/state/, printed), nbgrader's exchange in the build area (world-writable and sticky, as
nbgrader documents), the students' Jupyter configuration (course id, exchange, the Assignments tab only) and the
instructor's, and the course directory made private to its owner but for what the students' servers need (the
venv, the exchange, their configuration). Then JupyterHub, with configurable-http-proxy, on 127.0.0.1:PORT, and the
next two ports for the proxy's and the hub's APIs.
"""

from __future__ import annotations

import argparse
import json
import os
import pwd
import secrets
import shutil
import signal
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

from course import paths, student_nbgrader
from course.permissions import share_only
from course.hub import accounts, classes, exchange, owner

HUB = paths.BUILD / "hub"
STATE = HUB / "state"
STUDENT_CONFIG = HUB / "jupyter" / "student"
INSTRUCTOR_CONFIG = HUB / "jupyter" / "instructor"
PROXY = Path(os.environ.get("COURSE_HUB_PROXY", HUB / "node" / "node_modules" / ".bin" / "configurable-http-proxy"))
ROSTER = Path(os.environ.get("COURSE_ROSTER", paths.ROOT / "roster.csv"))
INSTRUCTOR = "instructor"
VENV = Path(sys.prefix)
# What a student's server may use of the machine, so that one student cannot take the hub from the others: the
# largest file it may write, its memory (with all it starts), and the most processes (threads included) of the
# account.
STUDENT_FILE_MB = int(os.environ.get("COURSE_HUB_FILE_MB", 1024))
STUDENT_MEMORY_MB = int(os.environ.get("COURSE_HUB_MEMORY_MB", 4096))
STUDENT_PROCESSES = 512
COURSE_FOLDERS = ("submitted", "autograded", "feedback", "grades", "backups")  # made now, so they are made private
CONFIG_FILE = Path(__file__).with_name("jupyterhub_config.py")
# JupyterLab's news from the internet: off for everyone (nothing is fetched from outside while the course runs). Its
# debugger too: it makes the kernel listen with debugpy on a loopback TCP port, without authentication, which any
# account of the machine could then use to run code as the kernel's user.
OFF_FOR_EVERYONE = {"@jupyterlab/apputils-extension:announcements": True, "@jupyterlab/debugger-extension": True}
# The students' servers: nbgrader's Assignments tab, not formgrader, the assignment creator or the course list.
STUDENT_LAB_PAGE = {"disabledExtensions": {**OFF_FOR_EVERYONE, **{
    f"@jupyter/nbgrader:{name}": True for name in ("formgrader", "create-assignment", "course-list")}}}
INSTRUCTOR_LAB_PAGE = {"disabledExtensions": OFF_FOR_EVERYONE}
# Kernels talk to their server over unix sockets in the account's own runtime folder: a kernel's TCP ports on the
# loopback would let any account of the machine subscribe to what it prints.
PRIVATE_KERNELS = {"ServerKernelManager": {"transport": "ipc"}}
STUDENT_SERVER = {"ServerApp": {"jpserver_extensions": {"nbgrader.server_extensions.formgrader": False,
                                                        "nbgrader.server_extensions.course_list": False}},
                  **PRIVATE_KERNELS}
# JupyterHub's servers forbid framing; formgrader's tab in JupyterLab is a frame of the same origin.
INSTRUCTOR_SERVER = {"ServerApp": {"tornado_settings": {"headers": {"Content-Security-Policy": "frame-ancestors 'self'"}}},
                     **PRIVATE_KERNELS}
# A student's server sees its own /tmp (course.hub.classes.own_namespaces): its kernels' sockets go there, under the
# length a socket's path may have.
STUDENT_RUNTIME = "/tmp/jupyter-runtime"


def course_owner_problem(account: pwd.struct_passwd | None) -> str | None:
    """Why the instructor's server cannot run as the course directory's owner `account` (root, no account, or one
    that cannot read the repository), or None."""
    if account is None or account.pw_uid == 0:
        whose = "root's" if account else "no account's"
        return (f"The course directory {paths.COURSE} is {whose}, and the instructor's JupyterLab runs as the course's "
                "owner: give the course an owner that is not root first, as root: make course-owner OWNER=teacher "
                "(docs/hub_instructor.md)")
    config = paths.ROOT / "nbgrader_config.py"
    if problem := fails_as(account.pw_name, f"import course.paths; open({str(config)!r}).read()",
                           {"PYTHONPATH": str(paths.ROOT)}):
        return (f"the course's owner {account.pw_name} cannot read the course's code ({problem}): {paths.ROOT}, its "
                "nbgrader_config.py and course/ must be readable by it")
    return None


def passwords(names: list[str]) -> dict[str, str]:
    """A password per account, made once and kept in the state folder (only root reads it)."""
    file = STATE / "passwords.json"
    known = json.loads(file.read_text()) if file.exists() else {}
    known = {name: known.get(name) or secrets.token_urlsafe(9) for name in names}
    file.write_text(json.dumps(known, indent=1))
    file.chmod(0o600)
    return known


def write_json(file: Path, data: dict) -> None:
    file.parent.mkdir(parents=True, exist_ok=True)
    file.write_text(json.dumps(data, indent=1))


def write_student_config() -> None:
    """The students' Jupyter configuration folder (JUPYTER_CONFIG_DIR of their servers; they can read, not write it)."""
    STUDENT_CONFIG.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(student_nbgrader.__file__, STUDENT_CONFIG / "course_student_nbgrader.py")
    (STUDENT_CONFIG / "nbgrader_config.py").write_text(
        "import sys\n"
        f"sys.path.insert(0, {str(STUDENT_CONFIG)!r})\n"
        "import course_student_nbgrader  # noqa: E402 (course/student_nbgrader.py)\n\n"
        "c = get_config()  # noqa: F821\n"
        f"c.CourseDirectory.course_id = {paths.COURSE_ID!r}\n"
        f"c.Exchange.root = {str(paths.EXCHANGE)!r}\n"
        "course_student_nbgrader.configure(c)\n"
        "c.KernelManager.transport = 'ipc'  # Validate's kernel, as the server's (course.hub.serve)\n")
    write_json(STUDENT_CONFIG / "labconfig" / "page_config.json", STUDENT_LAB_PAGE)
    write_json(STUDENT_CONFIG / "jupyter_server_config.json", STUDENT_SERVER)  # (a .d file would miss the kernels)
    (STUDENT_CONFIG / "migrated").touch()  # jupyter_core's mark that there is no IPython 3 config to move here
    for path in [STUDENT_CONFIG, *STUDENT_CONFIG.rglob("*")]:
        path.chmod(0o755 if path.is_dir() else 0o644)


def write_instructor_config() -> None:
    write_json(INSTRUCTOR_CONFIG / "jupyter_server_config.json", INSTRUCTOR_SERVER)
    write_json(INSTRUCTOR_CONFIG / "labconfig" / "page_config.json", INSTRUCTOR_LAB_PAGE)


def open_exchange() -> None:
    """nbgrader's exchange root: anyone may create in it, nobody may remove what others made; and the course's folder
    in it, made by the course before any student can log in (one a student made first is refused, and said why)."""
    paths.EXCHANGE.mkdir(parents=True, exist_ok=True)
    paths.EXCHANGE.chmod(0o1777)
    if problem := exchange.course_folder_problem():
        sys.exit(problem)
    folder = paths.EXCHANGE / paths.COURSE_ID
    folder.mkdir(exist_ok=True)
    info = paths.COURSE.stat()
    os.lchown(folder, info.st_uid, info.st_gid)  # the course owner's, who releases into it
    folder.chmod(0o755)  # (the course's commands make folders under umask 077)


def shared_with_students() -> list[Path]:
    """What students' servers reach of the course directory: the venv, the exchange, their configuration."""
    return [VENV, paths.EXCHANGE, STUDENT_CONFIG]


def fails_as(account: str, code: str, env: dict[str, str] | None = None) -> str | None:
    """The last line of the error of the venv's Python running `code` as `account` (with `env`), or None if it ran."""
    result = subprocess.run(["runuser", "-u", account, "--", str(VENV / "bin" / "python"), "-c", code],
                            capture_output=True, text=True, cwd="/", env={**os.environ, **(env or {})})
    return None if result.returncode == 0 else (result.stderr.strip().splitlines() or ["(no message)"])[-1]


def unreachable(account: str) -> str | None:
    """What a student's server could not do as `account` (run the venv's nbgrader, list the exchange), or None."""
    return fails_as(account, f"import nbgrader, os; os.listdir({str(paths.EXCHANGE)!r}); "
                             f"open({str(STUDENT_CONFIG / 'nbgrader_config.py')!r}).read()")


def prepare(port: int, service_token: str | None = None) -> dict:
    """Accounts, passwords, exchange, configuration and permissions; returns the hub's settings."""
    if os.geteuid() != 0:
        sys.exit("make hub creates the students' Unix accounts: run it as root")
    if not PROXY.exists():
        sys.exit(f"configurable-http-proxy is missing ({PROXY}): `make hub` installs it")
    course_owner = owner.owner_of_course()
    if problem := course_owner_problem(course_owner):
        sys.exit(problem)
    students = accounts.read_roster(ROSTER)
    for student in students:
        accounts.create_account(student.account)
    STATE.mkdir(parents=True, exist_ok=True)
    STATE.chmod(0o700)
    for folder in COURSE_FOLDERS:
        (paths.COURSE / folder).mkdir(exist_ok=True)
    open_exchange()
    write_student_config()
    write_instructor_config()
    share_only(paths.COURSE, shared_with_students())
    owner.hand_back()  # what this made in the course directory (submitted/, ...) is the owner's from now on
    owner.give_to_owner(INSTRUCTOR_CONFIG)  # (in the hub's folder, root's): where JupyterLab keeps its layout
    problem = students and unreachable(students[0].account)
    if problem:
        sys.exit(f"a student's account cannot run the course's venv or reach the exchange ({problem}): every folder "
                 f"above {VENV} and {paths.EXCHANGE} must be searchable by other accounts")
    instructor_env = {**paths.course_environment(paths.COURSE, paths.BUILD), "JUPYTER_CONFIG_DIR": str(INSTRUCTOR_CONFIG),
                      "PATH": f"{VENV / 'bin'}:/usr/local/bin:/usr/bin:/bin", "PYTHONPATH": str(paths.ROOT)}
    # the owner's kernels' sockets: in its home, under the length a socket's path may have
    instructor_env["JUPYTER_RUNTIME_DIR"] = str(Path(course_owner.pw_dir) / ".jupyter-runtime")
    if "COURSE_ASSIGNMENTS_DIR" in os.environ:
        instructor_env["COURSE_ASSIGNMENTS_DIR"] = os.environ["COURSE_ASSIGNMENTS_DIR"]
    settings = {"port": port, "public_url": f"http://localhost:{port}", "state": str(STATE), "proxy": str(PROXY),
                "venv": str(VENV), "course": str(paths.COURSE), "repository": str(paths.ROOT),
                "instructor": INSTRUCTOR, "owner": course_owner.pw_name, "students": [s.account for s in students],
                "instructor_environment": instructor_env,
                "student_environment": {"JUPYTER_CONFIG_DIR": str(STUDENT_CONFIG),
                                        "JUPYTER_RUNTIME_DIR": STUDENT_RUNTIME,
                                        "PATH": f"{VENV / 'bin'}:/usr/local/bin:/usr/bin:/bin"},
                "shared_with_students": [str(path) for path in shared_with_students()],
                "student_file_mb": STUDENT_FILE_MB, "student_memory_mb": STUDENT_MEMORY_MB,
                "student_processes": STUDENT_PROCESSES, "service_token": service_token}
    write_json(STATE / "settings.json", settings)
    passwords([INSTRUCTOR, *settings["students"]])
    return settings


def hub_processes(settings: Path = STATE / "settings.json") -> list[int]:
    """Every process the hub of this course (of its `settings` file) started: the hub, its proxy, the servers; those
    whose environment names that file (found even where a pid file is gone)."""
    mark = f"{classes.HUB_MARK}={settings}".encode()
    found = []
    for entry in Path("/proc").iterdir():
        try:
            if entry.name.isdigit() and mark in (entry / "environ").read_bytes().split(b"\0"):
                found.append(int(entry.name))
        except OSError:
            pass
    return found


def add_to_running_hub(pids: list[int]) -> None:
    """`make hub` while the hub runs: the roster's new students get their accounts and passwords, and can log in at
    once (the hub reads the passwords at each login); the running hub is left as it is."""
    students = accounts.read_roster(ROSTER)
    new = [s.account for s in students if s.account not in accounts.course_accounts()]
    for account in new:
        accounts.create_account(account)
    secret = passwords([INSTRUCTOR, *(s.account for s in students)])
    print(f"The course's hub already runs (its processes: {', '.join(map(str, sorted(pids)[:5]))}"
          f"{', ...' if len(pids) > 5 else ''}), and was left running.")
    if new:
        print("New students of the roster, who can log in now:\n" + "\n".join(f"{name:<24} {secret[name]}"
                                                                              for name in new))
    else:
        print(f"No new student in {ROSTER}. To restart the hub, press Ctrl-C where it runs (or run make hub-clean, "
              "which also removes the accounts), then make hub.")


def start(settings: dict) -> subprocess.Popen:
    """JupyterHub, in its own process group, logging to the state folder."""
    log = (STATE / "hub.log").open("ab")
    hub = subprocess.Popen([str(VENV / "bin" / "jupyterhub"), "-f", str(CONFIG_FILE)], cwd=STATE, stdout=log,
                           stderr=subprocess.STDOUT, start_new_session=True,
                           env={**os.environ, "COURSE_HUB_SETTINGS": str(STATE / "settings.json"),
                                "PYTHONPATH": str(paths.ROOT), "PATH": f"{VENV / 'bin'}:{os.environ['PATH']}"})
    (STATE / "hub.pid").write_text(str(hub.pid))
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and hub.poll() is None:
        try:
            urllib.request.urlopen(f"{settings['public_url']}/hub/api/", timeout=2)
            return hub
        except OSError:
            time.sleep(0.25)
    stop(hub)
    sys.exit(f"the hub did not start: see {STATE / 'hub.log'}")


def stop(hub: subprocess.Popen) -> None:
    """Stop the hub, which stops every server it started and the proxy."""
    if hub.poll() is None:
        hub.send_signal(signal.SIGTERM)
        try:
            hub.wait(timeout=30)
        except subprocess.TimeoutExpired:
            os.killpg(hub.pid, signal.SIGKILL)
            hub.wait()
    (STATE / "hub.pid").unlink(missing_ok=True)


def welcome(settings: dict) -> str:
    names = [settings["instructor"], *settings["students"]]
    secret = passwords(names)
    lines = [f"The course's hub: {settings['public_url']}/", "",
             f"{'account':<24} password", *(f"{name:<24} {secret[name]}" for name in names), "",
             f"The instructor's server runs as {settings['owner']} in {settings['course']} (formgrader: the Formgrader "
             "tab); students have the Assignments tab. Ctrl-C stops the hub and every server."]
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--port", type=int, default=int(os.environ.get("COURSE_HUB_PORT", 8000)))
    args = parser.parse_args()
    if os.geteuid() == 0 and (running := hub_processes()):
        add_to_running_hub(running)
        return
    settings = prepare(args.port, os.environ.get("COURSE_HUB_SERVICE_TOKEN"))
    hub = start(settings)
    print(welcome(settings), flush=True)
    # Ctrl-C (even where a parent made us ignore it) and SIGTERM end the wait below, then stop the hub: stopping it
    # from the handler itself would wait on the hub while the interrupted wait holds it.
    for stopping in (signal.SIGINT, signal.SIGTERM):
        signal.signal(stopping, signal.default_int_handler)
    try:
        hub.wait()
    except KeyboardInterrupt:
        pass
    finally:
        stop(hub)
        print("the hub and every server stopped", flush=True)


if __name__ == "__main__":
    main()
