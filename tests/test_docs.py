"""The documentation stays in step with the code: generated tables are fresh, and every command and path the docs
show exists."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from bad_submissions import DOC, generated_part, table
from course import paths

DOCS = [paths.ROOT / "README.md", *sorted((paths.ROOT / "docs").glob("*.md"))]
# What `make all` or grading writes: named by the docs, absent from a fresh clone.
GENERATED = ("build/", "grades/", "feedback/", "submitted/", "autograded/", "backups/", "gradebook.db", ".venv")
REPOSITORY_PATH = re.compile(r"^(?:assignments|course|docs|tests|scripts|source|release|\.ci)/\S*$|"
                             r"^(?:nbgrader_config\.py|requirements\.txt|Makefile|pytest\.ini|roster\.csv)$")


def code_of(doc: Path) -> list[str]:
    """The doc's code: each inline code span and each line of its fenced blocks."""
    text = doc.read_text()
    blocks = re.findall(r"^```[^\n]*\n(.*?)^```", text, flags=re.S | re.M)
    inline = re.findall(r"`([^`\n]+)`", re.sub(r"^```[^\n]*\n.*?^```", "", text, flags=re.S | re.M))
    return inline + [line for block in blocks for line in block.splitlines()]


def make_targets() -> set[str]:
    return set(re.findall(r"^([a-z][a-z-]*):", (paths.ROOT / "Makefile").read_text(), flags=re.M))


def test_bad_submissions_table_is_generated_from_the_corpus():
    assert generated_part(DOC.read_text()).rstrip() == table().rstrip(), \
        "docs/bad_submissions.md is stale: run `python tests/bad_submissions.py`"


def test_the_readme_is_short_and_sends_each_audience_to_its_docs():
    readme = (paths.ROOT / "README.md").read_text()
    assert len(readme.splitlines()) <= 80
    for audience in ("Students", "Instructors", "How grading works", "Writing an assignment", "Benchmarks"):
        assert f"**{audience}" in readme


@pytest.mark.parametrize("doc", DOCS, ids=lambda d: d.name)
def test_every_make_target_a_doc_shows_exists(doc):
    named = {target for code in code_of(doc) for match in re.findall(r"(?:^|[\s;(])make((?: [a-z][a-z-]*)+)", code)
             for target in match.split()}
    assert named - make_targets() == set()


@pytest.mark.parametrize("doc", DOCS, ids=lambda d: d.name)
def test_every_path_and_module_a_doc_shows_exists(doc):
    missing = []
    for code in code_of(doc):
        for module in re.findall(r"python -m (course(?:\.\w+)+)", code):
            file = paths.ROOT / module.replace(".", "/")
            if not (file.with_suffix(".py").exists() or (file / "__init__.py").exists()):
                missing.append(module)
        path = code.strip()
        if REPOSITORY_PATH.match(path) and not path.startswith(GENERATED):
            pattern = re.sub(r"<[^>]+>", "*", path).rstrip("/")
            if not list(paths.ROOT.glob(pattern)):
                missing.append(path)
    for target in re.findall(r"\]\(([^)#:]+)\)", doc.read_text()):  # links to the repository's files
        if not (doc.parent / target).exists():
            missing.append(target)
    assert missing == []
