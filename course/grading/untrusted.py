"""Reading what student code may have written, and quoting it back to people.

Student code runs in folders the grader later reads (the probe's jail). A file
there may be a symbolic link to a secret outside the jail, a device, or a
gigabyte of text; and whatever it contains may reach a student's feedback.
So the grader reads such files only through `read_bytes` (no link followed,
regular files only, a size limit), and quotes any text from them only through
`quoted` (bounded, one line); every text a person reads as Markdown goes
through `escaped` when it is rendered.
"""

from __future__ import annotations

import html
import os
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


def read_text(path: Path, limit: int) -> str:
    return read_bytes(path, limit).decode("utf-8", errors="replace")


def quoted(text: str, limit: int = MAX_QUOTED) -> str:
    """`text` as one printable line of at most `limit` characters."""
    printable = "".join(c for c in " ".join(str(text).split()) if c.isprintable())
    return printable if len(printable) <= limit else printable[: limit - 1] + "…"


def escaped(text: str) -> str:
    """`text` safe inside Markdown, a Markdown table cell and HTML: <PAD> stays visible as <PAD>."""
    return html.escape(text, quote=False).replace("|", "\\|")
