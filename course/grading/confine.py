"""Start a command as the jail's user: no privilege, no capabilities, a seccomp filter, bounded file sizes.

    python -I confine.py --uid UID --gid GID --seccomp HEX [--chdir DIR] [--connection FILE] [--max-file-mb N] -- COMMAND ...

Every process that runs student code starts through this file (course.grading.sandbox builds the command),
inside bubblewrap's namespaces or, where a container forbids them, on its own. Run as root, it:

1. reads FILE (a Jupyter connection file, private to root) while it still can;
2. drops every capability from the bounding set, leaves every group, and becomes UID:GID (CapEff,
   CapPrm, CapBnd, CapInh and CapAmb are then 0);
3. sets no_new_privs (no setuid program or file capability can give any back);
4. loads the seccomp filter HEX, a BPF program that `compiled_filter` made outside the jail (`FILTERED`:
   those system calls fail with EPERM, creating namespaces among them, and clone3 with ENOSYS: its flags
   cannot be inspected, and C libraries then use clone);
5. writes FILE's copy, now as UID, to a new private file and puts its path where the command says
   {jail_connection}; changes to DIR; caps the size of any file written (RLIMIT_FSIZE) and the jail user's
   processes (RLIMIT_NPROC);
6. replaces itself with COMMAND.

Run by another user, it cannot change users and does the rest. The file is self-contained (the standard
library; pyseccomp only where the filter is compiled, outside): the kernel's jail holds this file and no other
of the course.
"""

from __future__ import annotations

import argparse
import ctypes
import errno
import os
import resource
import tempfile

CONNECTION_PLACEHOLDER = "{jail_connection}"
# The system calls student code never needs, and which open the way out of a jail or into the kernel's attack
# surface: file handles (the "shocker" escape), mounts, namespaces, tracing, keyrings, BPF, perf, modules, kexec.
FILTERED = ("open_by_handle_at", "name_to_handle_at", "mount", "umount2", "pivot_root", "chroot", "move_mount",
            "open_tree", "fsopen", "fsconfig", "fsmount", "fspick", "mount_setattr", "unshare", "setns", "ptrace",
            "process_vm_readv", "process_vm_writev", "keyctl", "add_key", "request_key", "bpf", "perf_event_open",
            "userfaultfd", "init_module", "finit_module", "delete_module", "kexec_load", "kexec_file_load",
            "reboot", "swapon", "swapoff", "acct", "quotactl", "syslog", "iopl", "ioperm", "lookup_dcookie",
            "io_uring_setup", "io_uring_enter", "io_uring_register", "shmget", "msgget", "semget", "mq_open",
            "modify_ldt")
# Socket families refused: the network (IPv4, IPv6) and the hypervisor (VSOCK). Local sockets (a kernel's ZeroMQ over
# IPC) and netlink (ZeroMQ reads the interfaces with it, and aborts without) stay. Where there are no namespaces, this
# is what keeps student code off the network; ipykernel then goes without its loopback pipe for forked processes.
REFUSED_SOCKETS = (2, 10, 40)  # AF_INET, AF_INET6, AF_VSOCK
# clone's namespace flags: CLONE_NEWNS, NEWCGROUP, NEWUTS, NEWIPC, NEWUSER, NEWPID, NEWNET, NEWTIME
CLONE_NAMESPACES = (0x00020000, 0x02000000, 0x04000000, 0x08000000, 0x10000000, 0x20000000, 0x40000000, 0x80)
_PR_CAPBSET_DROP, _PR_SET_NO_NEW_PRIVS, _PR_CAP_AMBIENT, _PR_CAP_AMBIENT_CLEAR_ALL = 24, 38, 47, 4
_PR_SET_SECCOMP, _SECCOMP_MODE_FILTER = 22, 2
_libc = ctypes.CDLL(None, use_errno=True)


def syscall_filter():
    """The seccomp filter (pyseccomp): everything allowed but FILTERED and namespace-making clones."""
    import pyseccomp as seccomp

    rules = seccomp.SyscallFilter(seccomp.ALLOW)
    for name in FILTERED:
        try:
            rules.add_rule(seccomp.ERRNO(errno.EPERM), name)
        except (RuntimeError, ValueError, OSError):  # a call this architecture or libseccomp does not know
            pass
    for family in REFUSED_SOCKETS:
        rules.add_rule(seccomp.ERRNO(errno.EACCES), "socket", seccomp.Arg(0, seccomp.EQ, family))
    for flag in CLONE_NAMESPACES:
        rules.add_rule(seccomp.ERRNO(errno.EPERM), "clone", seccomp.Arg(0, seccomp.MASKED_EQ, flag, flag))
    rules.add_rule(seccomp.ERRNO(errno.ENOSYS), "clone3")
    return rules


def compiled_filter() -> bytes:
    """`syscall_filter()` as the BPF program the kernel loads (for this machine's architecture)."""
    with tempfile.TemporaryFile() as program:
        syscall_filter().export_bpf(program)
        program.seek(0)
        return program.read()


class _SockFilterProgram(ctypes.Structure):
    _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.c_void_p)]


def load_filter(program: bytes) -> None:
    """Load a BPF program (8 bytes an instruction) as this process's seccomp filter: it and its children keep it."""
    instructions = ctypes.create_string_buffer(program, len(program))
    fprog = _SockFilterProgram(len(program) // 8, ctypes.cast(instructions, ctypes.c_void_p))
    if _libc.prctl(_PR_SET_SECCOMP, _SECCOMP_MODE_FILTER, ctypes.byref(fprog), 0, 0) != 0:
        raise OSError(ctypes.get_errno(), "the seccomp filter could not be loaded")


def _prctl(*args: int) -> None:
    if _libc.prctl(*(ctypes.c_ulong(a) for a in args), ctypes.c_ulong(0), ctypes.c_ulong(0)) != 0:
        error = ctypes.get_errno()
        raise OSError(error, f"prctl{args}: {os.strerror(error)}")


def drop_privileges(uid: int, gid: int) -> None:
    """As root: empty the bounding set, leave every group, become uid:gid (permitted and effective sets empty)."""
    last = int(open("/proc/sys/kernel/cap_last_cap").read())
    for cap in range(last + 1):
        _prctl(_PR_CAPBSET_DROP, cap, 0)
    try:
        os.setgroups([])
        os.setresgid(gid, gid, gid)
        os.setresuid(uid, uid, uid)
    except OSError as error:  # e.g. a container that maps too few uids
        raise SystemExit(f"confine: could not become the jail's user {uid} ({error.strerror})") from None
    _prctl(_PR_CAP_AMBIENT, _PR_CAP_AMBIENT_CLEAR_ALL, 0)
    if os.getresuid() != (uid, uid, uid) or os.getresgid() != (gid, gid, gid):
        raise SystemExit(f"confine: could not become the jail's user {uid}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--uid", type=int, required=True)
    parser.add_argument("--gid", type=int, required=True)
    parser.add_argument("--seccomp", required=True, help="the BPF program, in hexadecimal (compiled_filter)")
    parser.add_argument("--chdir")
    parser.add_argument("--connection", help="a file only root can read, handed to the command as a private copy")
    parser.add_argument("--max-file-mb", type=int, default=0)
    parser.add_argument("--max-processes", type=int, default=0, help="processes of the jail's user (RLIMIT_NPROC)")
    parser.add_argument("command", nargs=argparse.REMAINDER)
    args = parser.parse_args()
    command = args.command[1:] if args.command[:1] == ["--"] else args.command
    connection = open(args.connection, "rb").read() if args.connection else None
    if os.geteuid() == 0:
        drop_privileges(args.uid, args.gid)
    _prctl(_PR_SET_NO_NEW_PRIVS, 1, 0)
    load_filter(bytes.fromhex(args.seccomp))
    if connection is not None:
        fd, copy = tempfile.mkstemp(prefix="connection-", suffix=".json")
        os.write(fd, connection)
        os.close(fd)
        command = [copy if part == CONNECTION_PLACEHOLDER else part for part in command]
    if args.chdir:
        os.chdir(args.chdir)
    if args.max_file_mb:
        size = args.max_file_mb * 2**20
        resource.setrlimit(resource.RLIMIT_FSIZE, (size, size))
    if args.max_processes:  # the uid is the grading's own: this caps its processes where no cgroup does
        resource.setrlimit(resource.RLIMIT_NPROC, (args.max_processes, args.max_processes))
    os.execvp(command[0], command)


if __name__ == "__main__":
    main()
