"""MMGenBench caption clean-up: leftovers, quotes, the 70-word cut."""

from judgekit.parsers.mmgenbench import MAX_WORDS, clean_caption


def test_plain_caption_unchanged_but_for_spaces():
    c = clean_caption("A red circle  on a\nblue background.")
    assert c.text == "A red circle on a blue background."
    assert (c.words, c.cut, c.leftovers_removed) == (7, False, False)


def test_template_leftovers_and_quotes_removed():
    c = clean_caption('"A small green star at the top left."</s>')
    assert c.text == "A small green star at the top left."
    assert c.leftovers_removed
    assert clean_caption("A cat<|im_end|>").text == "A cat"
    assert clean_caption("\u201cA sunny \u201cbeach\u201d scene\u201d").text == "A sunny beach scene"


def test_single_quotes_only_when_wrapping():
    assert clean_caption("'A dog's bowl'").text == "A dog's bowl"
    assert clean_caption("A dog's bowl").text == "A dog's bowl"


def test_cut_to_seventy_words():
    raw = " ".join(f"w{i}" for i in range(100))
    c = clean_caption(raw)
    assert c.words == MAX_WORDS == 70 and c.words_before_cut == 100 and c.cut
    assert c.text.split()[-1] == "w69"


def test_empty_reply_is_an_empty_caption():
    c = clean_caption("  </s> ")
    assert c.text == "" and c.words == 0
