"""MMGenBench's caption clean-up reproduces the authors' code (lerogo/MMGenBench generate/run.py and
generate/tools.py::pre_caption, after VLMEvalKit's .xlsx of predictions), quirks included."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from judgekit.benchmarks.deviations import deviations
from judgekit.benchmarks.mmgenbench.pipeline import Options
from judgekit.parsers.mmgenbench import clean_caption, reference_caption

W70 = " ".join(f"w{i}" for i in range(70))
W71 = " ".join(f"w{i}" for i in range(71))

# (raw reply, caption the reference draws); worked out by hand from the reference code
CASES = [
    ("A red car</s>", "A red car"),
    ("A red </s> car", "A red </s> car"),  # </s> only at the very end
    ("A red car</s></s>", "A red car</s>"),  # once
    ("A red car</s>\n", "A red car</s>"),  # the newline is stripped after the </s> check
    ("A<|im_end|> red car<|im_end|>", "A red car"),  # ends with it: every one goes
    ("A <|im_end|> red car", "A <|im_end|> red car"),  # not at the end: all stay
    ("A red car<|im_end|></s>", "A red car"),
    ("A red car</s><|im_end|>", "A red car</s>"),
    ('"A red car"', "A red car"),
    ('"A "red" car"', 'A "red" car'),  # inner quotes stay
    ('"A red car"</s>', "A red car"),  # first strip: only the opening quote; second: the closing one
    ('"A red car</s>"', "A red car"),
    ("\u201cA red car\u201d", "\u201cA red car\u201d"),  # typographic quotes stay
    ("'A red car'", "'A red car'"),
    ("A  red   car", "A  red   car"),  # runs of spaces stay
    ("A red\ncar\n\n", "A red\ncar"),
    ("\nA red car", "\nA red car"),  # a leading newline stays
    ("A red car \n", "A red car"),
    ("A red car\n ", "A red car\n"),  # spaces are stripped after the newlines
    ("A red car\t", "A red car\t"),
    ("  A red car  ", "A red car"),
    ("</s>", ""),
    ('""', ""),
    ("", "nan"),  # pandas reads an empty cell of the .xlsx as NaN, and str(NaN) is "nan"
    ("None", "nan"),
    ("NA", "nan"),
    ("null", "nan"),
    (" None", "None"),  # not exactly a missing-value string: kept, then stripped
    ('"None"', "None"),
    (W70, W70),
    (W71, " ".join(f"w{i}" for i in range(70))),
    (W70 + " ", W70),
    ("w0  " + " ".join(f"w{i}" for i in range(1, 70)), "w0  " + " ".join(f"w{i}" for i in range(1, 69))),
    ("w0\n" + " ".join(f"w{i}" for i in range(1, 71)), "w0\n" + " ".join(f"w{i}" for i in range(1, 71))),
]


@pytest.mark.parametrize("raw, drawn", CASES)
def test_fixed_inputs_give_the_reference_caption(raw, drawn):
    assert reference_caption(raw).text == drawn


def test_counts_are_pieces_of_split_on_a_space():
    c = reference_caption(W71 + " w71")
    assert (c.words, c.words_before_cut, c.cut) == (70, 72, True)
    c = reference_caption("a  b")
    assert (c.words, c.words_before_cut, c.cut) == (3, 3, False)
    assert reference_caption("</s>").words == 0 and reference_caption("</s>").leftovers_removed
    assert not reference_caption("a </s> b").leftovers_removed
    assert reference_caption("w0 w1 w2", max_words=2).text == "w0 w1"


def _transcribed(raw: str, limit: int = 70) -> str:
    """The reference rule, transcribed statement by statement."""
    missing = {"", "#N/A", "#N/A N/A", "#NA", "-1.#IND", "-1.#QNAN", "-NaN", "-nan", "1.#IND", "1.#QNAN",
               "<NA>", "N/A", "NA", "NULL", "NaN", "None", "n/a", "nan", "null"}
    cell = str(float("nan")) if raw in missing else raw
    caption = cell.strip('"')
    if caption.endswith("</s>"):
        caption = caption[: len(caption) - len("</s>")]
    if caption.endswith("<|im_end|>"):
        caption = "".join(caption.split("<|im_end|>"))
    caption = caption.strip('"')
    while caption.endswith("\n"):
        caption = caption[:-1]
    while caption.startswith(" "):
        caption = caption[1:]
    while caption.endswith(" "):
        caption = caption[:-1]
    pieces = caption.split(" ")
    return " ".join(pieces[:limit]) if len(pieces) > limit else caption


_TOKENS = ["a", "word", " ", "  ", "\n", "\t", '"', "'", "\u201c", "</s>", "<|im_end|>", "<", "s>", "None", "NA"]


@settings(max_examples=400, deadline=None)
@given(st.lists(st.sampled_from(_TOKENS), max_size=180).map("".join), st.integers(1, 80))
def test_any_reply_gives_the_transcribed_reference(raw, limit):
    assert reference_caption(raw, limit).text == _transcribed(raw, limit)


@settings(max_examples=200, deadline=None)
@given(st.integers(60, 80), st.lists(st.sampled_from([" ", "  ", "\n", " \n"]), min_size=80, max_size=80))
def test_long_captions_around_the_cut(n, seps):
    raw = "".join(f"w{i}{seps[i]}" for i in range(n))
    assert reference_caption(raw).text == _transcribed(raw)


def test_defaults_are_the_reference_and_judgekits_rule_is_a_listed_option():
    assert deviations(Options()) == []
    got = deviations(Options(clean_captions=True, max_words=60, lossless_generated=True))
    assert [(d["option"], d["value"]) for d in got] == [("clean_captions", True), ("max_words", 60),
                                                        ("lossless_generated", True)]
    assert all(d["kind"] == "option" and d["reference"] for d in got)
    # the two rules part where the reference leaves leftovers, quotes and spaces alone
    raw = '"A  red </s> car"<|im_end|>'
    assert reference_caption(raw).text == 'A  red </s> car'
    assert clean_caption(raw).text == "A red car"


# VLMEvalKit's MMGenBench.prompt_list[0] (vlmeval/dataset/image_mmgenbench.py), as its triple-quoted
# literal evaluates: a newline first, backslash-newline continuations joined, a newline last
PROMPT = (
    "\n# Role\n"
    "You are an expert in the field of image understanding, focusing on the understanding of images and "
    "generating the image caption-prompt.\n\n"
    "# Definition Explanation\n"
    "image caption-prompt: Refers to the caption or description of an image, used to provide to a "
    "Text-to-Image model to generate a new image.\n"
    "Text-to-Image model: Can generate a new image based on the provided image caption-prompt, such as "
    "stable diffusion 3, flux, and other image generation models.\n\n"
    "# Task Description\n"
    "Generate an image caption-prompt based on the input image.\n\n"
    "# Key Points and Requirements\n"
    "1. Accurately understand the input image and precisely generate an image caption-prompt.\n"
    "2. The generated image caption-prompt, when provided to the Text-to-Image model, requires the "
    "Text-to-Image model to generate a new image that is as consistent as possible with the input image.\n"
    "3. The generated image caption-prompt must conform to the preferences of the Text-to-Image model.\n"
    "4. The generated image caption-prompt should describe the input image in as much detail as possible, "
    "and it should be between 20 to 60 words.\n\n"
    "# Output Format\n"
    "A string, that is the image caption-prompt. No extra output needed.\n"
)


def test_the_caption_prompt_is_the_authors_string_byte_for_byte():
    from judgekit.benchmarks.mmgenbench.pipeline import CAPTION_PROMPT
    from judgekit.resources import load_prompt, prompts_dir

    assert load_prompt(CAPTION_PROMPT).text == PROMPT
    assert (prompts_dir() / CAPTION_PROMPT).read_bytes() == PROMPT.encode("utf-8")  # no CRLF, no BOM
