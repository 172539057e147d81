"""Creation-MMBench: the reference's judge builds its prompts from the ``.xlsx`` prediction file
(``evaluate``: ``data = load(eval_file)``; the swapped order's file is written from it and read
again), so the question and the ground truth come back from it as the answers do: control
characters as ``_x000D_``-style escapes, one trip for the forward order, two for the swapped one.
``keep_all_answer_text`` keeps them as written.  (Found while doing issue 25, point 2.)"""

from __future__ import annotations

import pytest
from test_creation_data import _row, _write

from judgekit.benchmarks.creation_mmbench.data import load_data
from judgekit.benchmarks.creation_mmbench.pipeline import Options, Prepared
from judgekit.benchmarks.creation_mmbench.prediction_file import as_judged
from judgekit.benchmarks.creation_mmbench.requests import _Builder
from judgekit.config import RunSpec


def _spec():
    return RunSpec.model_validate({
        "name": "t", "benchmark": "creation_mmbench", "data": "x.tsv",
        "models": {"cand": {"provider": "sim", "model": "c"}, "judge": {"provider": "sim", "model": "j"}},
        "roles": {"candidates": ["cand"], "judge": "judge"}})


def _prompts(item, **options):
    prep = Prepared(_spec(), Options(**options), [item])
    return {(kind, order): msg.parts[-1].text for kind, order, msg, _ in _Builder(prep)._judge_messages(item, "Fine.")}


@pytest.mark.parametrize("keep", [False, True])
def test_question_and_ground_truth_come_back_from_the_prediction_file(tmp_path, keep):
    q, gt = "Describe it.\r\nThen _x0041_ that.", "A truth\x0b here."
    path = _write(tmp_path / "f.tsv", [_row("1", question=q, ground_truth=gt)])
    (item,) = load_data(path).items
    prompts = _prompts(item, keep_all_answer_text=keep)
    for (kind, order), text in prompts.items():
        want_q = q if keep else as_judged(q, order)
        assert f"[INSTRUCTIONS]\n{want_q}\n[END INSTRUCTIONS]" in text
        if kind == "vfs":
            want_gt = gt if keep else as_judged(gt, order)
            assert f"[GROUND TRUTH]\n{want_gt}\n[END GROUND TRUTH]" in text
    if not keep:  # judgekit before: the question as written ("\r\n") in both orders
        assert "[INSTRUCTIONS]\nDescribe it._x000D_\nThen _x0041_ that.\n" in prompts[("pairwise", 1)]
        assert "[GROUND TRUTH]\nA truth_x000B_ here.\n" in prompts[("vfs", 0)]
