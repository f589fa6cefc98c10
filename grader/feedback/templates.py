"""The HTML pages' templates (``grader/feedback/templates/``, package data): one jinja2 environment,
autoescaped.

Every value a template writes is escaped unless the code that made it marks it safe (only the SVG
that matplotlib writes for the class report is). Templates ship in the wheel and in the student
release, since ``grade check --html`` renders the feedback page on the student's machine.
"""

from __future__ import annotations

from functools import lru_cache


@lru_cache(maxsize=1)
def environment():
    """The templates' jinja2 environment: autoescaping on, undefined names an error, not an empty
    string."""
    import jinja2

    return jinja2.Environment(
        loader=jinja2.PackageLoader("grader.feedback", "templates"),
        autoescape=True,
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=True,
    )


def render(name: str, **values) -> str:
    """The template ``name`` rendered with ``values``."""
    return environment().get_template(name).render(**values)


def macro(template: str, name: str):
    """A macro of ``template``, callable from Python (it returns escaped HTML as a ``Markup``
    string)."""
    return getattr(environment().get_template(template).module, name)
