"""Reading what student code may have written, and quoting it back to people.

Student code runs in folders the grader later reads (the probe's jail). A file
there may be a symbolic link to a secret outside the jail, a device, or a
gigabyte of text; and whatever it contains may reach a student's feedback.
So the grader reads such files only through `read_bytes` (no link followed,
regular files only, a size limit), and quotes any text from them only through
`quoted` (bounded, one line); every text a person reads as Markdown goes
through `escaped` when it is rendered. A folder a student made (a submission in
the hub's exchange) is copied only through `copy_owned_tree`: its owner's
regular files, nothing else, however it changes meanwhile.
"""

from __future__ import annotations

import fnmatch
import html
import os
import re
import stat
from pathlib import Path

MAX_QUOTED = 300  # characters of student-made text shown in one message


class UntrustedFileError(OSError):
    """A file written by student code that the grader refuses to read."""


def read_bytes(path: Path, limit: int) -> bytes:
    """The bytes of `path`, if it is a regular file (not a link) of at most `limit` bytes."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    except OSError as error:
        raise UntrustedFileError(f"{path.name} could not be opened without following a link ({error.strerror})") from None
    with os.fdopen(fd, "rb") as f:
        info = os.fstat(f.fileno())
        if not stat.S_ISREG(info.st_mode):
            raise UntrustedFileError(f"{path.name} is not a regular file")
        data = f.read(limit + 1)
    if len(data) > limit:
        raise UntrustedFileError(f"{path.name} is larger than {limit} bytes")
    return data


def copy_owned_tree(source: Path, target: Path, owner: int, limit: int, ignored: tuple[str, ...] = ()) -> list[str]:
    """Copy the folder `source`, made by the account `owner`, to a new folder `target`, taking only what that account
    owns and could hand in: folders, and regular files with no other name (no symbolic link is followed or copied,
    no hard link to another file, FIFO, device or socket); at most `limit` bytes in all. Every name is opened relative
    to its folder's open descriptor, without following links, so a folder swapped for a link meanwhile is refused.
    Names matching an `ignored` pattern are passed over in silence. Returns what was left out, each as 'path (why)'."""
    skipped: list[str] = []
    budget = [limit]
    top = os.open(source, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW)
    try:
        if os.fstat(top).st_uid != owner:
            raise UntrustedFileError(f"{source.name} belongs to another account")
        _copy_folder(top, target, owner, Path(), budget, skipped, ignored)
    finally:
        os.close(top)
    return skipped


MAX_DEPTH = 16  # folders in folders of a submission: deeper ones are left out (a student's could be thousands deep)


def _copy_folder(folder: int, target: Path, owner: int, where: Path, budget: list[int], skipped: list[str],
                 ignored: tuple[str, ...]) -> None:
    target.mkdir(parents=True)
    if len(where.parts) >= MAX_DEPTH:
        skipped.append(f"{where} (folders deeper than {MAX_DEPTH} are left out)")
        return
    for name in sorted(os.listdir(folder)):
        if any(fnmatch.fnmatch(name, pattern) for pattern in ignored):
            continue
        path = where / name
        info = os.stat(name, dir_fd=folder, follow_symlinks=False)
        why = ("a symbolic link" if stat.S_ISLNK(info.st_mode) else "another account's" if info.st_uid != owner else
               None if stat.S_ISDIR(info.st_mode) or stat.S_ISREG(info.st_mode) else "not a file or folder")
        if why:
            skipped.append(f"{path} ({why})")
            continue
        flags = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | (os.O_DIRECTORY if stat.S_ISDIR(info.st_mode) else 0)
        try:
            fd = os.open(name, flags, dir_fd=folder)
        except OSError as error:  # swapped for a link or something else since it was listed
            skipped.append(f"{path} (could not be opened as it was listed: {error.strerror})")
            continue
        try:
            opened = os.fstat(fd)
            if (opened.st_ino, opened.st_dev) != (info.st_ino, info.st_dev) or opened.st_uid != owner:
                skipped.append(f"{path} (changed while it was copied)")
            elif stat.S_ISDIR(opened.st_mode):
                _copy_folder(fd, target / name, owner, path, budget, skipped, ignored)
            elif opened.st_nlink != 1:
                skipped.append(f"{path} (a hard link: the same file has another name)")
            elif opened.st_size > budget[0]:
                skipped.append(f"{path} (larger than what is left of the submission's size limit)")
            else:
                with os.fdopen(os.dup(fd), "rb") as reader:
                    data = reader.read(budget[0] + 1)
                budget[0] -= len(data)
                if budget[0] < 0:
                    skipped.append(f"{path} (larger than what is left of the submission's size limit)")
                    continue
                (target / name).write_bytes(data)
        finally:
            os.close(fd)


def read_text(path: Path, limit: int) -> str:
    return read_bytes(path, limit).decode("utf-8", errors="replace")


def error_name(error: str) -> str:
    """The exception's name that heads `error` ('ValueError: shapes differ' -> 'ValueError'), or 'an error'. An error
    raised where the hidden probes ran is quoted back by its name alone: the rest is the student code's to write,
    and could carry out what it read there (the student sees their errors in full in nbgrader's run, where no probe
    is)."""
    name = error.split(":", 1)[0].strip()
    return name if re.fullmatch(r"[A-Za-z_][\w.]{0,80}", name) else "an error"


def quoted(text: str, limit: int = MAX_QUOTED) -> str:
    """`text` as one printable line of at most `limit` characters."""
    printable = "".join(c for c in " ".join(str(text).split()) if c.isprintable())
    return printable if len(printable) <= limit else printable[: limit - 1] + "…"


def escaped(text: str) -> str:
    """`text` safe inside Markdown, a Markdown table cell and HTML: <PAD> stays visible as <PAD>."""
    return html.escape(text, quote=False).replace("|", "\\|")
