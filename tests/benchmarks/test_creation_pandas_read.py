"""Creation-MMBench's text cells read as the reference reads its TSV: ``pandas.read_csv(sep='\\t')``.

A cell spelled exactly like one of pandas' missing values is NaN there (its prompts then say
``nan``; such a ``ground_truth`` is none), a white-space-only ``ground_truth`` is kept (the
with-ground-truth VFS prompt).  pandas is the oracle here; judgekit's loader does not import it.
Issue 25, point 2."""

from __future__ import annotations

import subprocess
import sys

import pandas as pd
import pytest
from pandas._libs.parsers import STR_NA_VALUES

from judgekit.benchmarks.creation_mmbench import prompts as P
from judgekit.benchmarks.creation_mmbench.data import PANDAS_NA, load_data
from judgekit.benchmarks.creation_mmbench.pipeline import Options
from judgekit.benchmarks.deviations import deviations

from test_creation_data import _row, _write

# every spelling, some near misses pandas keeps as text, white space around a spelling
QUESTIONS = sorted(STR_NA_VALUES - {""}) + [" NA", "NA ", "Nan", "na", "NONE", "#N/A N/A ", "What is shown?"]
GROUND_TRUTHS = ["", " ", "\t", "  \t ", "NA", "nan", "None", " nan", "nan ", "a truth", "N/A", "#N/A N/A"]


def test_pandas_na_spellings_are_pandas_own():
    assert PANDAS_NA == frozenset(STR_NA_VALUES)


def _file(tmp_path):
    rows = []
    for k, q in enumerate(QUESTIONS):
        gt = GROUND_TRUTHS[k % len(GROUND_TRUTHS)]
        base = QUESTIONS[(k + 3) % len(QUESTIONS)]
        rows.append(_row(str(k), question=q, ground_truth=gt, reference_answer_by_gpt4o=base))
    return _write(tmp_path / "f.tsv", rows)


def _as_format_writes(value) -> str:
    return f"{value}"


def test_cells_read_as_pandas_reads_them(tmp_path):
    path = _file(tmp_path)
    frame = pd.read_csv(path, sep="\t", dtype=str, keep_default_na=True)
    items = load_data(path).by_index()
    assert len(items) == len(frame)
    for _, line in frame.iterrows():
        item = items[str(line["index"])]
        assert item.question == _as_format_writes(line["question"])
        assert item.reference_answer == _as_format_writes(line["reference_answer_by_gpt4o"])
        gt = line["ground_truth"]
        with_gt = not pd.isna(gt) and gt != ""  # build_prompt's test
        assert bool(item.ground_truth) == with_gt
        if with_gt:
            assert item.ground_truth == gt
            p, text = P.vfs_prompt(item, "A", "B", defuse=False)
            assert "[GROUND TRUTH]\n" + gt + "\n[END GROUND TRUTH]" in text


def test_a_spelled_question_is_nan_in_the_judge_prompt(tmp_path):
    path = _write(tmp_path / "f.tsv", [_row("1", question="NA", ground_truth=" ")])
    (item,) = load_data(path).items
    _, text = P.pairwise_prompt(item, "A", "B", defuse=False)
    assert "nan" in text and "NA" not in text.replace("NAN", "")
    assert item.ground_truth == " "  # the with-ground-truth prompt, as the reference's
    kept = load_data(path, na_text=True, blank_ground_truth=True).items[0]
    assert kept.question == "NA" and kept.ground_truth == ""


def test_the_load_says_so_once_per_kind_with_the_count(tmp_path):
    rows = [_row("1", question="NA"), _row("2", question="null", ground_truth=" "),
            _row("3", reference_answer_by_gpt4o="None", ground_truth="N/A"), _row("4", ground_truth="\t")]
    warnings = load_data(_write(tmp_path / "f.tsv", rows)).warnings
    assert [w.split(" cell")[0] for w in warnings] == ["2 question", "1 reference_answer_by_gpt4o",
                                                        "1 ground_truth", "2 ground_truth"]
    assert "keep_na_text" in warnings[0] and "blank_ground_truth_as_missing" in warnings[3]
    assert load_data(_write(tmp_path / "g.tsv", [_row("1")])).warnings == []


def test_options_are_named_deviations_off_by_default():
    assert deviations(Options()) == [d for d in deviations(Options()) if d["kind"] == "injection guard"]
    on = {d["option"] for d in deviations(Options(keep_na_text=True, blank_ground_truth_as_missing=True))}
    assert {"keep_na_text", "blank_ground_truth_as_missing"} <= on


def test_loader_does_not_import_pandas():
    code = ("import sys; import judgekit.benchmarks.creation_mmbench.pipeline as p; "
            "assert 'pandas' not in sys.modules, 'pandas imported'")
    subprocess.run([sys.executable, "-c", code], check=True)


@pytest.mark.parametrize("cell", ["NA", "nan", "None"])
def test_parquet_layout_reads_the_same(tmp_path, cell):
    from judgekit.benchmarks.creation_mmbench.data import tsv_to_parquet

    tsv = _write(tmp_path / "f.tsv", [_row("1", question=cell, ground_truth=" ")])
    pq = tsv_to_parquet(tsv, tmp_path / "f.parquet")
    assert load_data(pq).items == load_data(tsv).items
