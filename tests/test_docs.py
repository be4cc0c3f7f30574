"""Documentation generated from the code stays in step with it."""

from bad_submissions import DOC, table


def test_bad_submissions_table_is_generated_from_the_corpus():
    assert DOC.read_text() == table(), "docs/bad_submissions.md is stale: run `python tests/bad_submissions.py`"
