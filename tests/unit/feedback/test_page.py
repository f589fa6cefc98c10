"""The feedback page (`grade autograde --html`, `grade check --html`): self-contained, private for
hidden tests, escaped, and rendered by headless Chromium with the student's score and a non-blank
screenshot."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from html.parser import HTMLParser
from pathlib import Path

import numpy as np
import pytest
from conftest import PROJECT, THE_BLOCK, course_copy, grade
from mutants import write_mutant

from grader.feedback.page import heatmap, legend

PRINTS = """
_attention = attention


def attention(*args, **kwargs):
    print('<script>alert(1)</script> & <b>bold</b>')
    return _attention(*args, **kwargs)
"""


@pytest.fixture(scope="module")
def pages(tmp_path_factory) -> dict[str, Path]:
    """Pages for a student whose attention has no mask (and prints HTML), and for the reference."""
    tmp = tmp_path_factory.mktemp("pages")
    mutant = write_mutant(
        PROJECT / "solutions" / "the-block", tmp / "subs" / "linus", "attention.no_mask"
    )
    with open(mutant / "attention.py", "a") as f:  # the failing tests show what it printed
        f.write(PRINTS)
    shutil.copytree(
        PROJECT / "solutions" / "the-block",
        tmp / "subs" / "ada",
        ignore=shutil.ignore_patterns("mistakes.py"),
    )
    code, output = grade(
        "autograde",
        "--course",
        course_copy(),
        "-a",
        THE_BLOCK,
        tmp / "subs",
        "--out",
        tmp / "out",
        "--html",
        "--jobs",
        1,
    )
    assert code == 0, output
    code, output = grade("check", "-a", THE_BLOCK, "--path", mutant, "--html", tmp / "check.html")
    assert code == 1, output
    return {
        "linus": tmp / "out" / "linus.html",
        "ada": tmp / "out" / "ada.html",
        "check": tmp / "check.html",
    }


class _Page(HTMLParser):
    """A page's tags, and for each <article>: its text, its figure captions and its heat maps'
    cells."""

    def __init__(self, text: str):
        super().__init__()
        self.tags: list[tuple[str, dict]] = []
        self.articles: list[dict] = []
        self._in: list[str] = []
        self.feed(text)

    def handle_starttag(self, tag, attrs):
        self.tags.append((tag, dict(attrs)))
        self._in.append(tag)
        if tag == "article":
            self.articles.append({"text": "", "captions": [], "maps": []})
        elif tag == "table" and self.articles and dict(attrs).get("class") == "heat":
            self.articles[-1]["maps"].append([])

    def handle_endtag(self, tag):
        while self._in and self._in.pop() != tag:
            pass

    def handle_data(self, data):
        if "article" not in self._in:
            return
        article = self.articles[-1]
        article["text"] += " ".join(data.split()) + " " if data.strip() else ""
        if "figcaption" in self._in:
            article["captions"].append(data.strip())
        elif "td" in self._in and "table" in self._in:
            article["maps"][-1].append(data)

    def article(self, start: str) -> dict:
        return next(a for a in self.articles if a["text"].startswith(start))


def test_the_page_is_self_contained(pages):
    for path in pages.values():
        text = path.read_text()
        page = _Page(text)
        names = {tag for tag, _ in page.tags}
        assert not names & {"script", "link", "img", "iframe", "object", "embed"}, path
        assert not any(key in ("src", "href") for _, attrs in page.tags for key in attrs), path
        assert not re.search(r"https?:|url\(|@import", text), path


def test_failed_tests_show_the_diff_heat_maps_and_the_diagnosis_hidden_ones_only_the_sentence(
    pages,
):
    page = _Page(pages["linus"].read_text())
    toy = page.article("✗ test_toy_attention_gives_the_course_a5")
    assert "Diagnosis: this matches attention without the causal mask" in toy["text"]
    assert toy["captions"] == ["expected", "yours", "yours − expected"]
    expected, yours, difference = toy["maps"]
    assert expected[:4] == ["1.085", "0.814", "0.030", "1.538"] and yours[:4] == [
        "-0.168",
        "1.242",
        "-0.330",
        "0.147",
    ]
    assert (
        difference[:4] == ["-1.254", "0.428", "-0.361", "-1.391"]
        and difference[-4:] == ["0.000"] * 4
    )
    hidden = page.article("✗ test_two_heads_distinct_weights")
    assert "hidden test" in hidden["text"]
    assert "Diagnosis: the same as above." in hidden["text"]  # said once per problem, by the first
    assert (
        not hidden["maps"]
        and "yours" not in hidden["text"]
        and not re.search(r"\d\.\d{3}", hidden["text"])
    )


def test_the_attention_pattern_is_shown_beside_the_reference(pages):
    figure = _Page(pages["linus"].read_text()).article("attention weights on the course's toy")
    assert figure["captions"] == ["yours", "reference"]
    yours, reference = figure["maps"]
    assert reference[:5] == [
        "1.000",
        "0.000",
        "0.000",
        "0.000",
        "0.000",
    ]  # token 1 sees only itself
    assert yours[:5] == ["0.326", "0.226", "0.121", "0.202", "0.125"]  # no mask: it sees them all
    assert yours[-5:] == reference[-5:]  # the last token sees all anyway


def test_what_the_student_printed_is_escaped(pages):
    text = pages["linus"].read_text()
    assert "&lt;script&gt;alert(1)&lt;/script&gt; &amp; &lt;b&gt;bold&lt;/b&gt;" in text
    assert "<script>" not in text and "<b>bold" not in text


def test_heatmap_cells_are_coloured_by_value_and_large_arrays_cut():
    table = heatmap(np.array([[-2.0, 0.0, 2.0, np.nan]]), "values", scale=2.0)
    cells = re.findall(r'<td style="background:(#[0-9a-f]+);color:#[0-9a-f]+">([^<]*)</td>', table)
    assert cells == [
        ("#3163ad", "-2.000"),
        ("#ffffff", "0.000"),
        ("#c0392b", "2.000"),
        ("#333", "nan"),
    ]
    big = heatmap(np.zeros((30, 40)), "big", scale=1.0)
    assert big.count("<tr>") == 12 and "(first 12 × 16 of 30 × 40)" in big


def test_the_heat_maps_have_a_colour_scale_with_its_values(pages):
    page = _Page(pages["linus"].read_text())
    toy = page.article("✗ test_toy_attention_gives_the_course_a5")
    assert re.search(
        r"colour scales: expected and yours -[\d.]+ .* 0 .* yours − expected -[\d.]+ ", toy["text"]
    )
    assert "colour scale:" in page.article("attention weights on the course's toy")["text"]
    near = legend("yours − expected", 2e-5)  # a near miss's scale reads as one
    swatches = re.findall(
        r'<span style="background:(#[0-9a-f]+);color:#[0-9a-f]+">([^<]*)</span>', near
    )
    assert [value for _, value in swatches] == ["-2e-05", "-1e-05", "0", "1e-05", "2e-05"]
    cells = dict(
        re.findall(
            r'<td style="background:(#[0-9a-f]+);[^>]*>([^<]*)</td>',
            heatmap(np.array([[-2e-5, 0.0, 2e-5]]), "d", scale=2e-5),
        )
    )
    assert [colour for colour, _ in swatches][::2] == list(
        cells
    )  # the cells' own colours at -scale, 0, scale
    assert list(cells.values()) == ["-2.0e-05", "0", "2.0e-05"]  # not 0.000 three times


def _chromium() -> str:
    found = shutil.which("chromium") or shutil.which("chromium-browser")
    assert found, "chromium not found: `make test` installs it (Debian: apt-get install chromium)"
    return found


def _browser(*args: str) -> subprocess.CompletedProcess:
    # timeout: a backstop against a hang, not a measurement (quiet: 1.5 s; 80x margin)
    return subprocess.run(
        [
            _chromium(),
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--hide-scrollbars",
            "--no-first-run",
            "--disable-extensions",
            *args,
        ],
        capture_output=True,
        text=True,
        timeout=120,
    )


@pytest.mark.parametrize("name", ["linus", "ada", "check"])
def test_headless_chromium_renders_the_page_with_the_students_score(pages, name):
    dom = _browser("--dump-dom", pages[name].as_uri()).stdout
    shown = re.search(r'<p class="score" id="score">Score: <strong>([^<]*)</strong>', dom)
    assert shown, dom[:500]
    if name == "check":
        assert re.fullmatch(r"[\d.]+ / [\d.]+", shown.group(1))
        return
    doc = json.loads(pages[name].with_suffix(".json").read_text())
    assert (doc["score"] == doc["max_score"]) == (name == "ada")  # the mask costs linus points
    assert shown.group(1) == f"{doc['score']:g} / {doc['max_score']:g}"


def test_a_screenshot_of_the_page_is_not_blank(pages, tmp_path):
    from PIL import Image

    shot = tmp_path / "page.png"
    result = _browser("--window-size=1200,1600", f"--screenshot={shot}", pages["linus"].as_uri())
    assert shot.is_file(), result.stderr[-500:]
    image = Image.open(shot).convert("RGB")
    pixels = np.asarray(image)
    assert image.size == (1200, 1600)
    assert (pixels.min(axis=2) < 200).mean() > 0.02  # text and colour, not a white page
    colours = {tuple(c) for c in pixels.reshape(-1, 3)[::7]}
    assert len(colours) > 50  # heat maps, the bar, the boxes
    top = pixels[:120].min(axis=2)
    assert (top < 100).sum() > 500  # the title and the score are drawn


def test_the_page_says_what_was_done_with_the_hand_in_escaped():
    import copy

    from test_report import SCORE

    from grader.feedback.page import render

    doc = {
        **copy.deepcopy(SCORE),
        "submission_notes": ["left out <data>.bin (6.0 MiB): over the cap of 5.0 MiB"],
        "blank": True,
    }
    text = render(doc, {})
    assert (
        '<section id="intake"><h2>Your hand-in</h2><ul><li>left out &lt;data&gt;.bin (6.0 MiB)'
        in text
    )
    plain = {
        k: v for k, v in copy.deepcopy(SCORE).items() if k not in ("submission_notes", "error")
    }
    assert 'id="intake"' not in render(plain, {})
