"""The folded view read by runs (View.of) equals the character-by-character reading on any text."""

from hypothesis import given, settings
from hypothesis import strategies as st

from judgekit.parsers.view import View

ANY = st.text(max_size=60)
ASCII = st.text(alphabet=st.characters(max_codepoint=127), max_size=60)
# what the rules care about, often: white space of every kind, markup, controls, compatibility forms
TRICKY = list(" \t\n\r\x0b\x0c\x1c\x1f\x00\x07\x1b\x7f*_`~[]aZ:9") + [
    "\u00a0", "\u00a8", "\u3000", "\u200b", "\ufeff", "\ufb01", "\u0130", "\u0131", "\u017f", "\u212a",
    "\uff3b", "\uff21", "\u27e6", "\u0301", "\u2028", "\u201c", "\U0001d400", "\u1160"]
DENSE = st.text(alphabet=st.sampled_from(TRICKY), max_size=40)


@settings(max_examples=500)
@given(text=st.one_of(ANY, ASCII, DENSE), spaces=st.booleans())
def test_runs_read_as_characters_do(text, spaces):
    assert View.of(text, spaces=spaces) == View._of_any(text, spaces)


def test_every_character_of_the_first_planes_alone_and_between_letters():
    for code in [*range(0x3000), 0xFB01, 0xFF21, 0xFF3B, 0x1D400]:
        ch = chr(code)
        for text in (ch, f"a{ch}b", f" {ch} ", f"{ch}{ch}x {ch}"):
            for spaces in (True, False):
                assert View.of(text, spaces=spaces) == View._of_any(text, spaces), (code, text)


def test_runs_keep_where_each_character_came_from():
    v = View.of("  final *verdict*\tis: [[A>B]] ", spaces=True)
    assert v.text == "FINAL VERDICT IS: [[A>B]]"
    assert v.span(0, 5) == (2, 7) and v.span(6, 13) == (9, 16) and v.source[5] == 7
