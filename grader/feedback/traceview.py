"""The terminal view of a :class:`grader.feedback.trace.Trace`: each step token by token, your value
beside the reference's, then a verdict per function and what the case cannot check. Fits the
console's width (an 80-column terminal too): a step too wide for it shows the columns around its
first difference and says so; values that differ beyond the tolerance but would print the same at 3
decimals get as many decimals as show the difference.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from grader.feedback.trace import Step, Trace, off

if TYPE_CHECKING:
    from rich.console import Console
    from rich.table import Table

DECIMALS, MAX_DECIMALS = 3, 12  # the reference's values are stored to 12 decimals


def _number(value: float, decimals: int) -> str:
    return f"{round(value, decimals) + 0.0:.{decimals}f}" if np.isfinite(value) else str(value)


def decimals(step: Step) -> int:
    """The fewest decimals, 3 at least, at which every row that differs from the reference beyond
    the tolerance prints differently from it somewhere (a near miss gets the digits that show
    it)."""
    pairs = [
        (_as_rows(v), _as_rows(step.reference), _as_rows(off(v, step.reference)).any(axis=1))
        for v in (step.yours, step.chain)
        if v is not None and v.shape == step.reference.shape
    ]
    rows = [(got[r], want[r]) for got, want, rows_off in pairs for r in np.flatnonzero(rows_off)]
    for d in range(DECIMALS, MAX_DECIMALS + 1):
        if all(
            any(_number(a, d) != _number(b, d) for a, b in zip(got, want)) for got, want in rows
        ):
            return d
    return MAX_DECIMALS


def _as_rows(value: np.ndarray) -> np.ndarray:
    return value.reshape(1, -1) if value.ndim < 2 else value.reshape(len(value), -1)


def _lines(step: Step) -> list[tuple[str, str, np.ndarray, str]]:
    """(token, label, row, mark) for each line of the step's table: your value per token, the
    reference's under it where yours differs, and your chain's where it differs from both."""
    reference = _as_rows(step.reference)
    yours = (
        _as_rows(step.yours)
        if step.yours is not None and step.yours.shape == step.reference.shape
        else None
    )
    chain = (
        _as_rows(step.chain)
        if step.chain is not None and step.chain.shape == step.reference.shape
        else None
    )
    yours_off = _as_rows(off(step.yours, step.reference)).any(axis=1)
    chain_off = _as_rows(off(step.chain, step.reference)).any(axis=1)
    lines = []
    for r, want in enumerate(reference):
        token = str(r + 1)
        if yours is not None:
            lines.append((token, "yours", yours[r], "[red]✗[/]" if yours_off[r] else "[green]✓[/]"))
            token = ""
        if yours is None or yours_off[r]:
            lines.append((token, "ref", want, ""))
            token = ""
        if chain is not None and chain_off[r] and (yours is None or off(chain[r], yours[r]).any()):
            lines.append((token, "chain", chain[r], "[red]✗[/]"))
    return lines


def _table(lines: list, columns: range, decimals: int) -> "Table":
    from rich import box
    from rich.table import Table

    table = Table(
        box=box.SIMPLE_HEAD, show_edge=False, pad_edge=False, padding=(0, 1), collapse_padding=True
    )
    table.add_column("token", justify="right", no_wrap=True)
    table.add_column("", no_wrap=True)
    for c in columns:
        table.add_column(str(c + 1), justify="right", no_wrap=True)
    table.add_column("", no_wrap=True)
    for token, label, row, mark in lines:
        table.add_row(token, label, *(_number(row[c], decimals) for c in columns), mark)
    return table


def _fitted(console: "Console", step: Step, lines: list, decimals: int) -> tuple["Table", str]:
    """The step's table with as many columns as the console's width takes, those around the first
    column that differs, and a note saying which are shown when not all."""
    from rich.measure import Measurement

    wide = console.options.update_width(10_000)  # the table's own width, not the console's
    width = _as_rows(step.reference).shape[1]
    masks = [
        _as_rows(off(v, step.reference)).any(axis=0)
        for v in (step.yours, step.chain)
        if v is not None and v.shape == step.reference.shape
    ]
    differing = np.flatnonzero(np.any(masks, axis=0)) if masks else np.array([], dtype=int)
    first = int(differing[0]) if differing.size else 0
    for shown in range(width, 0, -1):
        start = 0 if first < shown else min(first, width - shown)
        table = _table(lines, range(start, start + shown), decimals)
        if shown == 1 or Measurement.get(console, wide, table).maximum <= console.width:
            break
    if shown == width:
        return table, ""
    which = f" (column {first + 1} is the first that differs)" if differing.size else ""
    return (
        table,
        f"columns {start + 1} to {start + shown} of {width} shown{which}; a wider terminal shows "
        "more",
    )


def _carried(trace: Trace, step: Step) -> tuple[str, ...]:
    """The student's own components of another problem that ``step`` ran with (a release) and that
    differ at their own steps: ``step`` may be only carrying their difference."""
    wrong = {v.function for v in trace.verdicts() if v.steps}
    return tuple(c for c in step.own if c in wrong)


def _step_header(i: int, step: Step, trace: Trace | None = None) -> str:
    from rich.markup import escape

    who = f" · {escape(step.function)}()" if step.function else ""
    carried = _carried(trace, step) if trace is not None else ()
    if step.unread:
        verdict = "[yellow]not judged: these cannot be read off your function (see below)[/]"
    elif not step.matches:
        rows = step.rows_off()
        verdict = f"[red]✗ token{'s' * (len(rows) > 1)} {', '.join(str(r + 1) for r in rows)}[/]"
        if carried:  # a release: its own components ran here, not the course's
            one = len(carried) == 1
            verdict += (
                f" [yellow](computed with your own {escape(_names(carried))}, a release "
                f"having no reference to run {'it' if one else 'them'} with; "
                f"{'it differs' if one else 'they differ'} at {'its' if one else 'their'} "
                f"own step{'' if one else 's'}, which may be all this step carries)[/]"
            )
    elif not step.chain_matches:
        verdict = "[green]✓[/] [yellow](your chain ✗: carried from an earlier step)[/]"
    else:
        verdict = "[green]✓[/]"
    return f"[bold]{i + 1}. {escape(step.name)}[/]{who}  {verdict}"


def _print_step(console: "Console", i: int, step: Step, trace: Trace | None = None) -> None:
    from rich.markup import escape

    console.print(_step_header(i, step, trace))
    problems = []
    if step.unread:
        console.print(f"   [yellow]{escape(step.unread)}[/]", highlight=False)
    elif step.yours is None:
        problems.append(("yours", step.error))
    elif step.yours.shape != step.reference.shape:
        problems.append(("yours", f"shape {step.yours.shape}, expected {step.reference.shape}"))
    if step.chain is None and step.chain_error not in (step.error, step.unread):
        problems.append(("your chain", step.chain_error))
    elif (
        step.chain is not None
        and step.chain.shape != step.reference.shape
        and (step.yours is None or step.chain.shape != step.yours.shape)
    ):
        problems.append(
            ("your chain", f"shape {step.chain.shape}, expected {step.reference.shape}")
        )
    for who, text in problems:
        console.print(
            f"   [red]{who}: {escape(text)}[/]".replace("\n", "\n      "), highlight=False
        )
    d = decimals(step)
    table, note = _fitted(console, step, _lines(step), d)
    console.print(table)
    if d > DECIMALS:
        console.print(f"   [yellow]{d} decimals: the difference is smaller than 0.001[/]")
    if note:
        console.print(f"   [dim]{note}[/]")


def _steps_list(steps: tuple[int, ...]) -> str:
    names = [str(i + 1) for i in steps]
    return (
        f"step {names[0]}" if len(names) == 1 else f"steps {', '.join(names[:-1])} and {names[-1]}"
    )


def _names(functions) -> str:
    names = [f"{f}()" for f in functions]
    return names[0] if len(names) == 1 else f"{', '.join(names[:-1])} and {names[-1]}"


def verdict_lines(trace: Trace) -> list[tuple[str, str]]:
    """One (mark, text) per function, in rich markup: ✓, or where it differs given the reference's
    input and what to do."""
    from rich.markup import escape

    lines = []
    for v in trace.verdicts():
        name = escape(f"{v.function}()")
        if not v.steps:
            lines.append(("[green]✓[/]", name))
            continue
        failed = next((i for i in v.steps if trace.steps[i].yours is None), None)
        either = (
            (
                f"{_names(v.calls_off)}, which it is meant to call, "
                f"{'does' if len(v.calls_off) == 1 else 'do'} not match the reference either"
            )
            if v.calls_off
            else ""
        )
        if failed is not None:
            text = (
                f"{name} failed at step {failed + 1}: "
                f"{escape(trace.steps[failed].error.splitlines()[0])}"
                + (f"; {either}." if either else ".")
            )
        elif either:
            text = (
                f"{name} differs at {_steps_list(v.steps)}; {either}: fix "
                f"{'it' if len(v.calls_off) == 1 else 'them'} first, then trace again."
            )
        elif v.calls_near:
            near = _names(v.calls_near)
            text = (
                f"{name} differs at {_steps_list(v.steps)}; {near}, which it is meant to call, "
                f"{'matches' if len(v.calls_near) == 1 else 'match'} the reference only within the "
                "tolerance, "
                f"and {name} carries the difference beyond it: look at {near} first (yours and ref "
                "at "
                f"{'its' if len(v.calls_near) == 1 else 'their'} step differ in the last decimals)."
            )
        else:
            text = (
                f"{name} differs at {_steps_list(v.steps)}; its input was the reference's, so look "
                f"at {name}."
            )
        lines.append(("[red]✗[/]", text))
    return lines


def blind_spot(trace: Trace) -> str:
    """What the case cannot check (the course's trace module says), and what can; "" when it says
    nothing. Then each fault it names (``faults``: what the fault is, why this case cannot see it,
    the case that can), one sentence each."""
    blind = trace.cannot_check
    if not blind:
        return ""
    lines = []
    if blind.get("because"):
        can = [f"`grade trace --case {blind['see']}` can"] if blind.get("see") else []
        tests = blind.get("tests") or []
        if tests:
            can.append(f"and so do the public tests {', '.join(tests)} (`grade check` runs them)")
        lines.append(
            f"With {blind['because']}, this example cannot check {blind['what']}"
            + (f": {', '.join(can)}." if can else ".")
        )
    for fault in blind.get("faults", ()):
        if fault.get("see"):
            sees = f"`grade trace --case {fault['see']}` sees it"
        elif fault.get("tests"):
            many = len(fault["tests"]) > 1
            sees = (
                f"no case of this example does; the public test{'s' * many} "
                f"{', '.join(fault['tests'])} {'do' if many else 'does'} (`grade check`)"
            )
        else:
            sees = "no case of this example does, nor a public test: the hidden tests do"
        lines.append(f"It cannot see {fault['fault']} ({fault['because']}): {sees}.")
    return "\n".join(lines)


def trace_table(trace: Trace, console: "Console", title: str) -> None:
    """Print ``trace``: every step, then the verdict per function, where the student's own chain
    first differs, and what the case cannot check."""
    from rich.markup import escape

    console.print(f"[bold]{escape(title)}[/]")
    console.print(
        "[dim]yours: your function given the reference's previous steps (it judges that function "
        "alone);"
        " ref: the reference, where yours differs; chain: your value from your own previous steps, "
        "where it differs from both.[/]"
    )
    for i, step in enumerate(trace.steps):
        _print_step(console, i, step, trace)
    if trace.matches:
        console.print("[green]Every step matches the reference.[/]")
    else:
        from rich.table import Table

        console.print("[bold]Function by function, each given the reference's input:[/]")
        verdicts = Table.grid(padding=(0, 1), pad_edge=True)  # a wrapped verdict stays indented
        verdicts.add_column(no_wrap=True)
        verdicts.add_column()
        for line in verdict_lines(trace):
            verdicts.add_row(*line)
        console.print(verdicts)
        first = trace.first_difference
        if first is not None:
            console.print(
                f"Your own chain first differs at step {first + 1}, "
                f"{escape(trace.steps[first].name)}."
            )
    note = blind_spot(trace)
    if note:
        console.print(f"[yellow]{escape(note)}[/]")
