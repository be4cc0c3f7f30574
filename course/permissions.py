"""Folders other accounts may pass through but not read: what the hub's students and the jail's user may reach."""

from __future__ import annotations

import os
from collections.abc import Container
from pathlib import Path


def share_only(root: Path, shared: list[Path]) -> None:
    """Make everything in `root` private to its owner but the `shared` paths, which other accounts reach through
    folders they may pass through but not list."""
    shared = [p.resolve() for p in shared]
    root.chmod(0o711)

    def walk(folder: Path) -> None:
        for entry in folder.iterdir():
            resolved = entry.resolve() if not entry.is_symlink() else None
            if resolved in shared or entry.is_symlink():
                continue
            if any(resolved in s.parents for s in shared):
                entry.chmod(0o711)
                walk(entry)
            else:
                entry.chmod(entry.stat().st_mode & ~0o077)

    walk(root)


def make_passable(path: Path) -> None:
    """Let other accounts pass through every folder above `path` (search, not list: the owner's rights are kept)."""
    for folder in reversed(path.resolve().parents):
        mode = folder.stat().st_mode
        if mode & 0o011 != 0o011:
            folder.chmod(mode | 0o011)


def give(folder: Path, uid: int, gid: int, owners: Container[int] | None = None, skip: Container[Path] = ()) -> int:
    """Give `uid`:`gid` everything below `folder` (only what `owners` own, if given; not the folders `skip` nor what
    is in them), walked by descriptor without following a link, so that what an untrusted account made there, or
    swaps meanwhile, cannot lead it elsewhere; an entry gone meanwhile is passed over. The number of entries given."""
    given = 0
    if not folder.is_dir():
        return given
    for top_path, dirs, files, top in os.fwalk(folder, follow_symlinks=False):
        dirs[:] = [name for name in dirs if Path(top_path, name) not in skip]
        for name in dirs + files:
            try:
                if owners is None or os.stat(name, dir_fd=top, follow_symlinks=False).st_uid in owners:
                    os.chown(name, uid, gid, dir_fd=top, follow_symlinks=False)
                    given += 1
            except OSError:
                pass
    return given


def give_to_root(folder: Path, owners: Container[int] | None = None) -> int:
    """`give` root everything below `folder` (only what `owners` own, if given)."""
    return give(folder, 0, 0, owners)


def remove_owned(folder: Path, owners: Container[int]) -> int:
    """Remove everything below `folder` that `owners` own, walked by descriptor without following a link (a folder
    of theirs that holds another account's entries is given to root instead). The number of entries removed."""
    removed = 0
    if not folder.is_dir():
        return removed
    for _, dirs, files, top in os.fwalk(folder, topdown=False, follow_symlinks=False):
        for name in files + dirs:
            try:
                if os.stat(name, dir_fd=top, follow_symlinks=False).st_uid not in owners:
                    continue
                if name in dirs:
                    try:
                        os.rmdir(name, dir_fd=top)
                    except OSError:
                        os.chown(name, 0, 0, dir_fd=top, follow_symlinks=False)
                        continue
                else:
                    os.unlink(name, dir_fd=top)
                removed += 1
            except OSError:
                pass
    return removed


def make_readable(folder: Path) -> None:
    """Let every account read everything in `folder` (and pass through its folders); links are left alone."""
    for path in [folder, *folder.rglob("*")]:
        if not path.is_symlink():
            mode = path.stat().st_mode
            wanted = mode | (0o555 if path.is_dir() else 0o444)
            if wanted != mode:
                path.chmod(wanted)
