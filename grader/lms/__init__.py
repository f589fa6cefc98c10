"""The LMS side: the roster, the exporters (a registry), the Gradescope autograder zip."""
