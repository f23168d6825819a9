"""The HTML report with hostile video names, and its thumbnails' spread over a long run.

A video's file name is the user's (or an attacker's): whatever it holds,
the page must show it as text -- in the <title> and the <h1> alike -- and
never as markup. The thumbnails must spread over the whole run while only a
few frames are ever drawn.
"""

from __future__ import annotations

import html
import math
from html.parser import HTMLParser

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

import cortex
from cortex.tools.cortex_run import BUNDLED_PIPELINE
from cortex.tools.report_html import THUMBNAILS, ReportRecorder, render_report
from cortex.tools.run_summary import RunClock, RunSummary
from cortex.video.overlay import FrameInfo

MODULE = cortex.parse(BUNDLED_PIPELINE)

MARKUP = ["<script>alert(1)</script>", "<img src=x onerror=alert(1)>", "</h1><h1>owned", "\"'><b>", "&amp;",
          "<!--", "]]>", "<svg onload=alert(1)>", "</title><script>"]
hostile_names = st.builds(
    lambda head, markup, tail, suffix: f"{head}{markup}{tail}{suffix}",
    st.text(st.characters(blacklist_categories=("Cs",), blacklist_characters="/\x00"), max_size=12),
    st.sampled_from(MARKUP),
    st.text(st.characters(blacklist_categories=("Cs",), blacklist_characters="/\x00"), max_size=12),
    st.sampled_from([".mp4", ".avi", ".mkv", ""]),
)
"""File names (no '/' or NUL: a file system allows everything else) carrying markup."""


class Texts(HTMLParser):
    """The text inside the first element of each kind (the page's <title>, its <h1>), and every tag opened."""

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.stack: list[str] = []
        self.text: dict[str, str] = {}
        self.tags: list[str] = []
        self.done: set[str] = set()  # elements closed once: only the first of each kind is read

    def handle_starttag(self, tag, attrs):
        self.tags.append(tag)
        self.stack.append(tag)

    def handle_endtag(self, tag):
        if self.stack and self.stack[-1] == tag:
            self.done.add(self.stack.pop())

    def handle_data(self, data):
        if self.stack and self.stack[-1] not in self.done:
            self.text[self.stack[-1]] = self.text.get(self.stack[-1], "") + data


def page_for(video: str, recorder: ReportRecorder | None = None) -> str:
    summary = RunSummary(video, (96, 128), (96, 128), 0, "balanced", "numpy", RunClock(origin=0.0, outputs_closed=1.0))
    return render_report(summary, MODULE, recorder or ReportRecorder())


@settings(max_examples=25, deadline=None)
@given(hostile_names)
def test_a_hostile_video_name_is_text_in_the_title_and_the_heading(name):
    page = page_for(name)
    parsed = Texts()
    parsed.feed(page)
    assert parsed.text["h1"] == f"cortex-run report: {name}"
    assert parsed.text["title"] == f"cortex-run report: {name}"
    assert "script" not in parsed.tags and parsed.tags.count("h1") == 1 and parsed.tags.count("img") == 0
    assert f"<h1>{html.escape('cortex-run report: ' + name)}</h1>" in page


def run_recorder(frames: int) -> tuple[ReportRecorder, list[int]]:
    """A recorder fed `frames` frames; returns it and the frames whose overlay it drew."""
    recorder, drawn = ReportRecorder(), []
    score = np.zeros((3, 4), np.float32)
    for index in range(frames):
        def render(index=index):
            drawn.append(index)
            return np.full((96, 128, 3), index % 256, np.uint8)

        recorder(index, FrameInfo(index, "balanced", time=index / 25), score, (), render)
    return recorder, drawn


def test_thumbnails_spread_over_a_long_run_and_few_frames_are_drawn():
    frames = 1000
    recorder, drawn = run_recorder(frames)
    picked = [number for number, _, _ in recorder.chosen_thumbnails()]
    assert len(picked) == THUMBNAILS
    assert len(drawn) <= 4 * THUMBNAILS * math.ceil(math.log2(frames))  # not every frame
    assert picked[0] == 0 and picked[-1] >= frames // 2  # from the start to the later half
    gaps = np.diff(picked)
    assert gaps.min() >= frames // (4 * THUMBNAILS)  # spread out, not crowded at the end
