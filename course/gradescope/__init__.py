"""The course on Gradescope: an autograder zip (`build`), what it runs there (`run`), and the results it writes
(`results`), following Gradescope's autograder contract: setup.sh and run_autograder at the zip's root, the
submission in /autograder/submission, results.json in /autograder/results."""

from pathlib import Path

AUTOGRADER = Path("/autograder")  # Gradescope's layout: source/ (the zip, unpacked), submission/, results/
