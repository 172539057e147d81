"""Counted nouns in user-facing text (judgekit/plural.py): '1 image', '2 images', never '1 images'
nor 'image(s)'."""

import re
from pathlib import Path

import pytest

from judgekit.plural import plural, plural_word

ROOT = Path(__file__).resolve().parents[1] / "judgekit"


@pytest.mark.parametrize("n, word, want", [
    (1, "image", "1 image"), (0, "image", "0 images"), (2, "image", "2 images"), (1_234, "call", "1,234 calls"),
    (1, "reply", "1 reply"), (3, "reply", "3 replies"), (2, "day", "2 days"), (2, "batch", "2 batches"),
    (2, "process", "2 processes"), (2, "decisive verdict", "2 decisive verdicts"), (2, "category", "2 categories"),
    (1, "results row", "1 results row"), (5, "results row", "5 results rows"),
])
def test_plural(n, word, want):
    assert plural(n, word) == want


def test_an_irregular_plural_is_given():
    assert plural(2, "person", "people") == "2 people" and plural_word(1, "person", "people") == "person"


def test_a_small_n_flag_agrees_with_its_counts():
    from judgekit.judging.honest import _few

    assert _few(1, 0) == "1 results row has"
    assert _few(0, 1) == "1 comparison has"
    assert _few(2, 1) == "2 results rows and 1 comparison have"


def test_no_message_counts_with_a_parenthesised_plural():
    """'3 batch(es)', '1 item(s)': a message with a count says it in words (plural()); the simulator's
    texts copy the providers' own and are left as they are."""
    found = []
    for path in ROOT.rglob("*.py"):
        if "sim" in path.relative_to(ROOT).parts[:1]:
            continue
        for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            if re.search(r"\}[^\"'{}]*\b[a-z]+\((s|es|ies)\)", line) or re.search(r"%d [a-z ]+\((s|es)\)", line):
                found.append(f"{path.relative_to(ROOT)}:{n}: {line.strip()}")
    assert not found, "\n".join(found)


def test_a_count_of_one_reads_singular(tmp_path):
    """A batch queue's note on one waiting call and one refused batch."""
    from judgekit.engine.batch_state import TokenQueue

    q = TokenQueue(1000)
    q.waiting, q.refusals, q.enqueued = 1, 1, 10
    text = q.note()
    assert "1 call waits for room" in text and "1 batch refused" in text, text
