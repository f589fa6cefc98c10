"""An LMS's answer in words, for a line of the report: one printable line of text, what an answer
was (``200 with a JSON list``, ``401 text/html, not JSON: "Log In to Canvas"``), the first line of
text of a page. An answer is printed, and may come from anyone on the way (a proxy, a sign-in
page, a firewall): nothing of it may break a line or reach the terminal as a control sequence.
"""

from __future__ import annotations

import unicodedata
from html.parser import HTMLParser


def one_line(text: str, limit: int = 300) -> str:
    """``text`` as one printable line of at most ``limit`` characters: an LMS's answer is printed in
    the report, where a line break could forge a line of its own ("posted: ...") and an escape
    sequence rewrite the terminal."""
    text = " ".join("".join(" " if unicodedata.category(c)[0] == "C" else c for c in text).split())
    return text if len(text) <= limit else text[: limit - 3] + "..."


class _Text(HTMLParser):
    """The text of an HTML page, a line per block, without its scripts and styles."""

    BLOCKS = ("br", "p", "div", "h1", "h2", "h3", "title", "li", "tr", "pre")
    HIDDEN = ("script", "style")

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.parts: list[str] = []
        self.skip = 0  # inside this many script or style elements

    def handle_starttag(self, tag, attrs):
        if tag in self.HIDDEN:
            self.skip += 1
        if tag in self.BLOCKS:
            self.parts.append("\n")

    def handle_endtag(self, tag):
        if tag in self.HIDDEN and self.skip:
            self.skip -= 1
        if tag in self.BLOCKS:
            self.parts.append("\n")

    def handle_data(self, data):
        if not self.skip:
            self.parts.append(data)


def first_line(response, limit: int = 120) -> str:
    """The first line of text of an answer's body (of an HTML page: of its text, the title
    first), as one printable line; empty when it has none. What a proxy's sign-in page, a
    maintenance page or a firewall said, for the report: "401 text/html" alone does not tell an
    expired token from a captive portal."""
    if response is None or not response.content:
        return ""
    text = response.text
    if "html" in response.headers.get("Content-Type", "").lower():
        parser = _Text()
        try:
            parser.feed(text)
            parser.close()
            text = "".join(parser.parts)
        except Exception:  # noqa: BLE001 - a page it cannot parse: the raw text
            pass
    line = next((line.strip() for line in text.splitlines() if line.strip()), "")
    return one_line(line, limit)


_JSON = {
    dict: "object",
    list: "list",
    str: "string",
    int: "number",
    float: "number",
    bool: "boolean",
    type(None): "null",
}


def describe(response) -> str:
    """An answer in a few words, for a one-line error: ``200 with a JSON list``, ``200 text/html,
    not JSON``, ``200 with an empty body``."""
    if response is None:
        return "no answer"
    status = response.status_code
    if not response.content:
        return f"{status} with an empty body"
    try:
        data = response.json()
    except ValueError:
        kind = one_line(response.headers.get("Content-Type", "").split(";")[0], 60)
        said = first_line(response)
        return f"{status} {kind or 'without a Content-Type'}, not JSON" + (
            f': "{said}"' if said else ""
        )
    if isinstance(data, list) and data:
        kinds = "/".join(sorted({_JSON.get(type(x), "value") for x in data}))
        return f"{status} with a JSON list of {kinds}s"
    return f"{status} with a JSON {'empty list' if data == [] else _JSON.get(type(data), 'value')}"
