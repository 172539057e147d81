"""Creation-MMBench's parsers against transcriptions of the reference's rules, on generated replies.

The functions ``reference_*`` below restate, in this test's own words, what VLMEvalKit's
``vlmeval/dataset/creation.py`` does with a judge reply (``extract_subjective`` and
``get_pw_score`` for the pairwise verdict, ``extract_objective`` for the VFS line), applied to
the reply as its OpenAI wrapper (``vlmeval/api/gpt.py``) hands it over: stripped.
"""

from __future__ import annotations

import re

from hypothesis import given, settings
from hypothesis import strategies as st

from judgekit.parsers.creation import NO_OBJECTIVE, parse_verdict, parse_vfs

_VERDICTS = {"A>>B", "A>B", "A=B", "B>A", "B>>A", "B<<A", "B<A", "B=A", "A<B", "A<<B"}


def reference_verdict(reply: str) -> str | None:
    for line in reply.split("\n"):
        upper = line.upper()
        if "FINAL VERDICT IS:" not in upper:
            continue
        m = re.search(r"\[\[\s*(.*?)\s*\]\]", upper)
        if m and m.group(1).replace(" ", "") in _VERDICTS:
            return m.group(1).replace(" ", "")
    return None


def reference_pw_score(verdict: str) -> int | None:
    # substring tests, in the reference's order
    for score, spellings in ((2, ("A<<B", "B>>A")), (1, ("A<B", "B>A")), (0, ("A=B", "B=A")),
                             (-1, ("A>B", "B<A")), (-2, ("A>>B", "B<<A"))):
        if any(s in verdict for s in spellings):
            return score
    return None


def reference_vfs(reply: str | None) -> str | None:
    if reply is None:
        return "NO_OBJECTIVE"
    reply = reply.strip()  # the wrapper's .strip()
    if reply == "":
        return "NO_OBJECTIVE"
    got: dict[str, float | None] = {"A": None, "B": None}
    for raw in reply.split("\n"):
        line = re.sub("[\u201c\u201d*]", "", raw.upper())
        for side in "AB":
            marker = f"RESPONSE {side} VISUAL FACTUALITY SCORE:"
            if line.startswith(marker):
                piece = line.split(marker)[1].strip().split("/")[0].strip()
                try:
                    got[side] = float(piece)
                except ValueError:
                    pass
                break
    a, b = got["A"], got["B"]
    if a is not None and b is not None and 0 <= a <= 10 and 0 <= b <= 10:
        return f"{a}|{b}"
    return None


def _as_reference(parsed) -> str | None:
    if parsed is None or parsed == NO_OBJECTIVE:
        return parsed
    a, b = parsed
    return f"{a}|{b}"


# --------------------------------------------------------------------------- generated replies
_SPACE = st.sampled_from(["", " ", "  ", "\t", "\u00a0", "\r"])
_NUMBER = st.one_of(
    st.integers(-3, 13).map(str),
    st.floats(-1, 11, allow_nan=False).map(lambda f: f"{f:.2f}"),
    st.sampled_from(["", "nan", "inf", "-0", "+7", "1e1", "8_0", "eight", "7.5.1", "\u0668", "10.0", "٣"]),
)
_SLASH = st.sampled_from(["", "/10", " / 10", "/", "/ten", "//10", " out of 10"])
_MARKER = st.builds(
    lambda side, form: form.format(side=side),
    st.sampled_from("AB"),
    st.sampled_from([
        "Response {side} Visual Factuality Score:", "RESPONSE {side} VISUAL FACTUALITY SCORE:",
        "response {side} visual factuality score:", "**Response {side} Visual Factuality Score:**",
        "\u201cResponse {side} Visual Factuality Score:\u201d", "Response {side} Visual Factuality Score :",
        "Response  {side} Visual Factuality Score:", "Response {side} Visual Factuality Score",
    ]),
)
_PREFIX = st.sampled_from(["", "", "", " ", "- ", "### ", "1. ", "*", "\u201c", '"', "\n"])


@st.composite
def _vfs_line(draw) -> str:
    line = draw(_PREFIX) + draw(_MARKER) + draw(_SPACE) + draw(_NUMBER) + draw(_SPACE) + draw(_SLASH)
    if draw(st.booleans()):  # the marker again on the same line
        line += draw(_SPACE) + draw(_MARKER) + draw(_SPACE) + draw(_NUMBER) + draw(_SLASH)
    return line


_OTHER_LINE = st.one_of(st.text(max_size=30), st.sampled_from(["", "Assistant A is better.", "X/10"]))
_vfs_replies = st.builds(
    lambda head, lines, tail, end: head + end.join(lines) + tail,
    _SPACE, st.lists(st.one_of(_vfs_line(), _vfs_line(), _OTHER_LINE), max_size=6), _SPACE,
    st.sampled_from(["\n", "\r\n"]),
)


@settings(max_examples=250, deadline=None)
@given(_vfs_replies)
def test_vfs_parse_is_the_references(reply):
    assert _as_reference(parse_vfs(reply)) == reference_vfs(reply)


def test_vfs_parse_of_nothing_is_the_references():
    for reply in (None, "", " \n\t "):
        assert _as_reference(parse_vfs(reply)) == reference_vfs(reply) == "NO_OBJECTIVE"


_TOKEN = st.one_of(
    st.sampled_from(sorted(_VERDICTS)),
    st.sampled_from(["VERDICT", "A>>>B", "tie", "a > > b", " b>>a ", "B\t>A", "A≫B", ""]),
)
_verdict_line = st.builds(
    lambda pre, marker, sp, tok, post: f"{pre}{marker}{sp}[[{tok}]]{post}",
    st.sampled_from(["", "**", "The ", "- "]),
    st.sampled_from(["Final Verdict is:", "FINAL VERDICT IS:", "final verdict is:", "Final Verdict:",
                     "Final Verdict is :", "Final verdict is:**"]),
    _SPACE, _TOKEN,
    st.sampled_from(["", ".", " [[A=B]]", " then [[B>A]]", "]]"]),
)
_pairwise_replies = st.builds(
    lambda lines, end: end.join(lines),
    st.lists(st.one_of(_verdict_line, _verdict_line, _OTHER_LINE), max_size=6), st.sampled_from(["\n", "\r\n"]),
)


@settings(max_examples=250, deadline=None)
@given(_pairwise_replies)
def test_verdict_parse_is_the_references(reply):
    ref = reference_verdict(reply)
    assert parse_verdict(reply) == (None if ref is None else reference_pw_score(ref))
