"""Folders other accounts may pass through but not read: what the hub's students and the jail's user may reach."""

from __future__ import annotations

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


def make_readable(folder: Path) -> None:
    """Let every account read everything in `folder` (and pass through its folders); links are left alone."""
    for path in [folder, *folder.rglob("*")]:
        if not path.is_symlink():
            mode = path.stat().st_mode
            wanted = mode | (0o555 if path.is_dir() else 0o444)
            if wanted != mode:
                path.chmod(wanted)
