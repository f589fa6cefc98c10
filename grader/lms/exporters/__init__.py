"""One module per output format, in one registry: each has ``SUFFIX``, ``NEEDS_ROSTER``, ``MANY_COLUMNS`` (whether
it writes a gradebook of several assignments, a column each), ``roster_columns(options)`` (the roster columns it
needs) and ``export(book, options, out) -> Written`` (see :mod:`grader.lms.exporters.common`)."""
from types import ModuleType

from grader.lms.exporters import blackboard, canvas, csv_table, gradescope, lti, moodle

EXPORTERS: dict[str, ModuleType] = {
    "canvas": canvas,
    "moodle": moodle,
    "blackboard": blackboard,
    "lti": lti,
    "gradescope": gradescope,
    "csv": csv_table,
}
