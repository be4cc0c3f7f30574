"""Grader accuracy: mutants that must be caught, alternatives that must be accepted."""
