"""options.human_labels end to end against the simulator: a pairwise panel (labels per order, the
ensemble as one more judge) and a rubric run give summary.json's human_agreement, its CSV and the
report's table, with figures equal to those recomputed from the run's own judgments; a bad labels
file is one error line (exit 2) before any call."""

from __future__ import annotations

import csv
import json

import pytest
import scipy.stats as st
from generic_helpers import user_error
from pairwise_helpers import QUESTIONS, run, write_case

from judgekit.judging.human_agreement import ALL, FIGURES
from judgekit.judging.pairwise import ENSEMBLE_JUDGE


def _labels(path, rows):
    with open(path, "w", newline="", encoding="utf-8") as f:
        w = csv.DictWriter(f, fieldnames=list(rows[0]))
        w.writeheader()
        w.writerows(rows)


def test_pairwise_panel_by_order(tmp_path):
    # a human verdict per item and order (slot verdicts: the candidate is B in order 0, A in order 1)
    verdicts = {("a1", 0): "B>>A", ("a1", 1): "A>B", ("a2", 0): "A=B", ("a2", 1): "B>A", ("a3", 0): "B>A",
                ("a3", 1): "A>>B", ("a4", 0): "A>B", ("a4", 1): "B>A"}
    _labels(tmp_path / "human.csv", [{"item": i, "candidate": "my-vlm", "order": o, "verdict": v}
                                     for (i, o), v in verdicts.items()])
    spec = write_case(tmp_path, options='human_labels = "human.csv"\n',
                      roles='candidates = ["my-vlm"]\njudges = ["judge", "judge-2"]\nbaseline = "baseline"')
    outcome = run(spec)
    got = outcome.summary["human_agreement"]
    assert got["unit"] == "(candidate, item, order)" and got["figures"] == list(FIGURES)
    assert got["unmatched_units"] == 0
    rows = got["rows"]
    assert [(r["judge"], r["model"]) for r in rows] == [(j, m) for m in ("my-vlm", ALL)
                                                        for j in ("judge", "judge-2", ENSEMBLE_JUDGE)]
    human = {(i, o): {"B>>A": 2, "B>A": 1, "A=B": 0, "A>B": -1, "A>>B": -2}[v] * (1 if o == 0 else -1)
             for (i, o), v in verdicts.items()}
    judged = {}
    with open(tmp_path / "out" / "judgments.csv", encoding="utf-8") as f:
        for r in csv.DictReader(f):
            if r["score"] != "":
                judged[(r["judge"], r["index"], int(r["order"]))] = float(r["score"])
    for judge in ("judge", "judge-2"):
        row = next(r for r in rows if r["judge"] == judge and r["model"] == ALL)
        keys = sorted(k for k in human if (judge, *k) in judged)
        j, p = [judged[(judge, *k)] for k in keys], [human[k] for k in keys]
        assert row["n"] == len(keys) and row["items"] == len({k[0] for k in keys})
        assert row["mae"] == pytest.approx(sum(abs(a - b) for a, b in zip(j, p)) / len(j))
        if len(set(j)) > 1:
            assert row["kendall"] == pytest.approx(st.kendalltau(j, p)[0])
            assert row["spearman"] == pytest.approx(st.spearmanr(j, p)[0])
    with open(tmp_path / "out" / "human_agreement.csv", encoding="utf-8") as f:
        assert len(list(csv.DictReader(f))) == len(rows)
    report = json.loads((tmp_path / "out" / "report.json").read_text(encoding="utf-8"))
    table = [t for t in report["tables"] if t["title"] == "Agreement with human labels"]
    assert table and len(table[0]["rows"]) == len(rows) and "kappa (quad.)" in table[0]["rows"][0]
    title, shown = outcome.result.more_displays[-1]
    assert title.startswith("Agreement with human labels") and "95% bootstrap interval" in title
    # n as printed: "8!" when the row is under min_items_for_interval (20 by default), as here
    assert len(shown) == len(rows) and shown[-1]["n"] == f"{rows[-1]['n']}!" and rows[-1]["small_n"]


def test_labels_for_every_candidate_and_no_labels_no_key(tmp_path):
    (tmp_path / "h.jsonl").write_text("".join(json.dumps({"id": q["id"], "score": 1}) + "\n" for q in QUESTIONS)
                                      + json.dumps({"id": "zz", "candidate": "my-vlm", "score": 0}) + "\n")
    spec = write_case(tmp_path / "a", options='human_labels = "../h.jsonl"\n')
    got = run(spec).summary["human_agreement"]
    rows = got["rows"]
    assert got["unmatched_units"] == 1  # item zz is in no judgment
    assert rows[-1]["model"] == ALL and rows[-1]["n"] == len(QUESTIONS)
    assert rows[-1]["spearman"] is None  # the humans' labels have no spread
    plain = run(write_case(tmp_path / "b")).summary
    assert "human_agreement" not in plain


def test_bad_labels_file_is_one_line_exit_2(tmp_path):
    (tmp_path / "human.csv").write_text("item,candidate,verdict\na1,my-vlm,better\na2,my-vlm,superb\n")
    spec = write_case(tmp_path, options='human_labels = "human.csv"\n')
    user_error(["run", str(spec), "--out", str(tmp_path / "out"), "--cache", str(tmp_path / "c.duckdb")],
               "human.csv", "row 2", "'verdict'", "superb")
    assert not (tmp_path / "out" / "summary.json").exists()


def test_rubric_panel_scores_on_the_scale(tmp_path):
    rows = [{"id": f"q{i}", "question": f"Question {i}: explain something in a few sentences."} for i in range(6)]
    (tmp_path / "q.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    (tmp_path / "judge.txt").write_text(
        "Please act as an impartial judge. You must rate the response on a scale of 1 to 10 by strictly following "
        "this format: \"[[rating]]\", for example: \"Rating: [[5]]\".\n[Question]\n{question}\n"
        "[The Start of Assistant's Answer]\n{answer}\n[The End of Assistant's Answer]\n")
    (tmp_path / "human.tsv").write_text("id\tcandidate\tscore\n" + "".join(f"q{i}\tc\t{3 + i}\n" for i in range(6)))
    spec = tmp_path / "spec.toml"
    spec.write_text('''name = "rubric-human"
benchmark = "rubric"
data = "q.jsonl"
[options]
judge_prompt = "judge.txt"
human_labels = "human.tsv"
bootstrap_samples = 100
[models.c]
provider = "sim"
model = "sim-vlm-strong"
[models.judge]
provider = "sim"
model = "sim-judge"
[models.judge-2]
provider = "sim"
model = "sim-judge-2"
[roles]
candidates = ["c"]
judges = ["judge", "judge-2"]
''')
    outcome = run(spec)
    got = outcome.summary["human_agreement"]
    assert got["scale"] == "1..10" and got["unit"] == "(candidate, item)"
    scores = {}
    with open(tmp_path / "out" / "judgments.csv", encoding="utf-8") as f:
        for r in csv.DictReader(f):
            if r["score"] != "":
                scores[(r["judge"], r["index"])] = float(r["score"])
    assert len(scores) == 12
    for row in got["rows"]:
        if row["judge"] == ENSEMBLE_JUDGE:
            j = [(scores[("judge", f"q{i}")] + scores[("judge-2", f"q{i}")]) / 2 for i in range(6)]
        else:
            j = [scores[(row["judge"], f"q{i}")] for i in range(6)]
        p = [3.0 + i for i in range(6)]
        assert row["n"] == 6
        assert row["mae"] == pytest.approx(sum(abs(a - b) for a, b in zip(j, p)) / 6)
        assert row["consistency"] == pytest.approx(100 * sum(abs(a - b) <= 1 for a, b in zip(j, p)) / 6)
        if len(set(j)) > 1:
            assert row["spearman"] == pytest.approx(st.spearmanr(j, p)[0])
