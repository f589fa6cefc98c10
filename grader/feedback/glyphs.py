"""Text for a stream that may not encode it: the marks the CLI prints (✓ ✗ · … ×) and their plain
stand-ins.

A Windows console redirected to a file or a pipe writes the ANSI code page (cp1252), and
``PYTHONIOENCODING=ascii`` is ASCII: printing ✓ there raises UnicodeEncodeError. The CLI's rich
consoles write through :func:`stream_for`, so every table and line (the trace's too) goes through
:func:`plain`; click's own messages need nothing (``click.echo`` falls back to UTF-8 bytes).
"""

from __future__ import annotations

PLAIN = {
    "✓": "ok",
    "✗": "FAIL",
    "·": "-",
    "…": "...",
    "×": "x",
    "−": "-",
    "–": "-",
    "—": "-",
    "␣": "_",
    "≤": "<=",
    "≥": ">=",
    "≈": "~",
    "→": "->",
    "²": "^2",
    "√": "sqrt",
    "σ": "sigma",
    "µ": "u",
}


def encodes(text: str, encoding: str | None) -> bool:
    """Whether a stream in ``encoding`` (None: UTF-8) can write ``text``."""
    try:
        text.encode(encoding or "utf-8")
    except UnicodeEncodeError:
        return False
    except LookupError:  # an encoding Python does not know: assume the worst
        return text.isascii()
    return True


def plain(text: str, encoding: str | None) -> str:
    """``text`` as a stream in ``encoding`` can print it: each mark it cannot encode as its plain
    stand-in (✓ -> ok, ✗ -> FAIL), any other such character as ``?``."""
    if encodes(text, encoding):
        return text
    out = []
    for char in text:
        if not encodes(char, encoding):
            char = PLAIN.get(char, "?")
        out.append(char)
    return "".join(out)


class _Plain:
    """A text stream that writes :func:`plain` text to the stream it wraps (and is that stream
    otherwise)."""

    def __init__(self, stream):
        self._stream = stream

    def write(self, text: str) -> int:
        return self._stream.write(plain(text, self.encoding))

    def __getattr__(self, name: str):  # encoding, flush, isatty, fileno ...
        return getattr(self._stream, name)


def stream_for(stream):
    """``stream`` itself when it can write the marks, else a wrapper writing their plain
    stand-ins."""
    return stream if encodes("".join(PLAIN), getattr(stream, "encoding", None)) else _Plain(stream)


def console(stderr: bool = False):
    """A rich console on stdout (or stderr) that prints only what the stream can encode."""
    import sys

    from rich.console import Console

    stream = sys.stderr if stderr else sys.stdout
    # Not a terminal (CI, a log file): wide enough that student ids are never cut. A stream that
    # cannot
    # encode ✓ (a redirected Windows console) gets "ok" instead.
    return Console(file=stream_for(stream), highlight=False, width=None if stream.isatty() else 160)
