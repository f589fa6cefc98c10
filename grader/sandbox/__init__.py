"""The sandbox: its policy (bwrap, seccomp), the grader-side client (zygote, worker), and child/,
the code run inside it."""
