"""Grading steps: in-notebook checks, probing a submission, judging it, merging results."""
