"""Reading an LMS's download of submissions (``grade collect``): one module per LMS, each with
``read(root, options) -> Read`` (see :mod:`grader.lms.downloads.common`), in one registry.

``SOURCES`` names them without importing any (the CLI's choices)."""

import importlib

SOURCES = {
    "canvas": "canvas",
    "moodle": "moodle",
    "blackboard": "blackboard",
    "gradescope": "gradescope",
    "github": "github",
}


def reader(source: str):
    """The module that reads ``source``'s downloads."""
    return importlib.import_module(f"{__name__}.{SOURCES[source]}")
