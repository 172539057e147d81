"""GuessBench's text files read as the authors' code reads them (``open(path).read()``, UTF-8
locale): a byte-order mark stays, the answer keeps a final line break, and the one-shot example's
answer is put in its prompt as read.  ``drop_bom`` and ``strip_answer`` are judgekit's options;
the load says how many files hold such text.  Issue 25, point 5."""

from __future__ import annotations

import shutil

import pytest

from judgekit.benchmarks.deviations import deviations
from judgekit.benchmarks.guessbench.data import load_notes, load_set, load_sets
from judgekit.benchmarks.guessbench.messages import TurnPrompts
from judgekit.benchmarks.guessbench.pipeline import Options
from judgekit.parsers.guess_reference import reply_matches
from judgekit.resources import samples_dir
from judgekit.types import TextPart

ROOT = samples_dir() / "guessbench"


def _as_the_reference_reads(path) -> str:
    with open(path, encoding="utf-8") as fh:  # open(path, "r") under a UTF-8 locale
        return fh.read()


@pytest.fixture
def root(tmp_path):
    r = tmp_path / "data"
    for src, dst in (("1", "1"), ("2", "2"), ("3", "3")):
        shutil.copytree(ROOT / src, r / dst)
    answer = (r / "1" / "Answer.txt").read_text(encoding="utf-8")
    (r / "1" / "Answer.txt").write_bytes(("\ufeff" + answer).encode("utf-8"))
    (r / "2" / "Hint_3.txt").write_bytes(b"\xef\xbb\xbf" + (r / "2" / "Hint_3.txt").read_bytes())
    (r / "3" / "Answer.txt").write_text(answer + "\n", encoding="utf-8")
    return r


def test_text_is_what_file_read_returns(root):
    for gs in load_sets(root):
        assert gs.answer == _as_the_reference_reads(gs.folder / "Answer.txt")
        for k, hint in enumerate(gs.hints, 1):
            assert hint == _as_the_reference_reads(gs.folder / f"Hint_{k}.txt")


def test_a_bom_or_a_final_line_break_in_the_gold_matches_nothing_as_in_the_reference(root):
    sets = {gs.set_id: gs for gs in load_sets(root)}
    clean = sets["2"].answer
    reply = f"answer: {clean.lower()}"
    assert reply_matches(sets["2"].answer, reply)
    assert not reply_matches(sets["1"].answer, reply)  # judgekit before issue 25: a match (BOM dropped)
    assert not reply_matches(sets["3"].answer, reply)  # judgekit before issue 25: a match (stripped)
    fixed = {gs.set_id: gs for gs in load_sets(root, drop_bom=True, strip_answer=True)}
    assert all(reply_matches(fixed[k].answer, f"answer: {fixed[k].answer.lower()}") for k in fixed)
    assert fixed["1"].letters == sets["1"].letters  # the letter count reads past a BOM either way


def test_the_bom_reaches_the_hint_prompt(root):
    gs = load_set(root / "2")
    assert gs.hints[2].startswith("\ufeff")
    assert not load_set(root / "2", drop_bom=True).hints[2].startswith("\ufeff")


def test_one_shot_example_answer_is_not_stripped(tmp_path):
    ex = tmp_path / "example"
    shutil.copytree(ROOT / "example", ex)
    (ex / "Answer.txt").write_text("Glass of Milk\n", encoding="utf-8")
    task = load_set(ROOT / "1")

    def example_answer_text(**read) -> str:
        (_, user), _ = TurnPrompts("one_shot", load_set(ex, **read)).turn(task, 3, None)
        return [p.text for p in user.parts if isinstance(p, TextPart)][-1]

    assert example_answer_text() == "Answer: The build represents Glass of Milk\n."
    assert example_answer_text(strip_answer=True) == "Answer: The build represents Glass of Milk."


def test_the_load_says_so_once_per_kind_with_the_count(root):
    notes = load_notes(load_sets(root))
    assert [n.split(":")[0] for n in notes] == [
        "1 Answer.txt file starts with a UTF-8 byte-order mark",
        "1 hint file starts with a UTF-8 byte-order mark",
        "1 Answer.txt file has white space around the answer (a final line break)"]
    assert load_notes(load_sets(ROOT)) == []


def test_options_are_named_deviations_off_by_default():
    assert deviations(Options()) == []
    assert [d["option"] for d in deviations(Options(drop_bom=True, strip_answer=True))] == ["drop_bom",
                                                                                             "strip_answer"]
