"""Start nbgrader's formgrader on this course, for grading written answers by hand.

    python -m course.formgrader [--port 8888]       (or: make formgrader; Ctrl-C stops it)

A Jupyter server on 127.0.0.1 only, rooted at the course directory (nbgrader
requires the course inside the server's root), with no token: anyone who can
open a connection on this machine can use it. Open
http://127.0.0.1:PORT/formgrader. Autograding from formgrader is refused
(course.grading.nbgrader_hooks): grade with `make autograde`.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

from course import paths


def command(port: int) -> list[str]:
    """The server's command line."""
    return [str(Path(sys.executable).with_name("jupyter")), "server", f"--ServerApp.root_dir={paths.COURSE}",
            "--ServerApp.ip=127.0.0.1", f"--ServerApp.port={port}", "--ServerApp.port_retries=0",
            "--ServerApp.open_browser=False", "--ServerApp.default_url=/formgrader", "--IdentityProvider.token=",
            "--allow-root"]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--port", type=int, default=8888)
    args = parser.parse_args()
    print(f"formgrader: http://127.0.0.1:{args.port}/formgrader", flush=True)
    os.chdir(paths.ROOT)  # where nbgrader_config.py is
    os.execv(command(args.port)[0], command(args.port))


if __name__ == "__main__":
    main()
