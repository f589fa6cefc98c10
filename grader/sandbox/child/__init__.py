"""The code mounted inside the sandbox. It imports nothing of the grader: it is run as a script
(python -I -S -B)."""
