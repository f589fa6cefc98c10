"""Grading: the results (Job, TestResult, Graded), the pytest plugin and its call plan, the
executors."""
