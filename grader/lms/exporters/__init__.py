"""One module per output format, in one registry: each has ``SUFFIX``, ``NEEDS_ROSTER``,
``MANY_COLUMNS`` (whether it writes a gradebook of several assignments, a column each),
``roster_columns(options)`` (the roster columns it needs) and ``export(book, options, out) ->
Written`` (see :mod:`grader.lms.exporters.common`).

``FORMATS`` names them without importing any (the CLI's choices: ``grade check`` never loads an
exporter); ``EXPORTERS``, format -> module, imports them when first read."""

import importlib

FORMATS = {
    "canvas": "canvas",
    "moodle": "moodle",
    "blackboard": "blackboard",
    "lti": "lti",
    "gradescope": "gradescope",
    "csv": "csv_table",
}


def __getattr__(name: str):
    if name == "EXPORTERS":
        return {
            fmt: importlib.import_module(f"{__name__}.{module}") for fmt, module in FORMATS.items()
        }
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
