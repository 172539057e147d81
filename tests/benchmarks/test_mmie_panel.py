"""MMIE's results with a panel of scorers, built from outcomes by hand (no run): the ensemble, the
agreement, the interval columns, the paired comparisons and Table 5 per scorer, against values
worked out here; and the panel's rules as properties (a one-scorer panel is the single scorer, a
scorer's results do not move when others join, identical scorers' ensemble is that scorer)."""

from __future__ import annotations

import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from judgekit.benchmarks.mmie.options import Options
from judgekit.benchmarks.mmie.panel import ENSEMBLE, POOLED, SCALE
from judgekit.benchmarks.mmie.pipeline import Judged, Outcome, Prepared, System
from judgekit.benchmarks.mmie.records import CATEGORIES, MMIEItem, Segment
from judgekit.benchmarks.mmie.results import build_result
from judgekit.judging.uncertainty import interval
from judgekit.metrics.mmie import category_table
from judgekit.parsers.mmie import parse_score

CODES = {"SA": CATEGORIES[0], "PBL": CATEGORIES[1], "MSR": CATEGORIES[2]}
FAIL = "call failed"  # a scoring call that failed (no record)
BAD = "unparseable"  # a reply without a valid score (a record, score None)


def _item(item_id: str) -> MMIEItem:
    cat = CODES[item_id.split("_")[0]]
    return MMIEItem(item_id, cat, "field-" + item_id[-1], None, (Segment.of_text("q"),), None, None, None,
                    ("data.json", 1))


def _judged(value) -> Judged:
    if value == FAIL:
        return Judged(error="HTTP 500")
    if value == BAD:
        return Judged(reply="### Feedback\nfine", parse=parse_score("### Feedback\nfine"))
    reply = f"### Feedback\nok\n### Score\n{value}"
    return Judged(reply=reply, parse=parse_score(reply))


def _result(table: dict, judges: list[str], samples: int = 200, human: dict | None = None, system: str = "s1"):
    """build_result over ``table``: system -> item id -> scorer -> score (int, BAD or FAIL)."""
    ids = list(dict.fromkeys(i for per in table.values() for i in per))
    items = {i: _item(i) for i in ids}
    outcomes = []
    for name, per in table.items():
        for i, by in per.items():
            outcomes.append(Outcome(name, items[i], answer=(Segment.of_text("an answer"),),
                                    judged={j: _judged(by[j]) for j in judges if j in by}))
    prep = Prepared(None, Options(bootstrap_samples=samples), list(items.values()), [],
                    [System(n, "native") for n in table], judges[0], human, system if human else None,
                    judges=list(judges))
    return build_result(prep, None, outcomes)


# two scorers, two systems; worked out by hand below
TABLE = {
    "s1": {"SA_1": {"A": 6, "B": 3}, "SA_2": {"A": 2, "B": BAD}, "PBL_1": {"A": BAD, "B": BAD},
           "PBL_2": {"A": 4, "B": FAIL}, "MSR_1": {"A": 0, "B": 5}},
    "s2": {"SA_1": {"A": 3, "B": 3}, "SA_2": {"A": 5, "B": 6}, "PBL_1": {"A": 1, "B": 2},
           "PBL_2": {"A": 2, "B": 2}, "MSR_1": {"A": 6, "B": 4}},
}
HUMAN = {"SA_1": 5.0, "SA_2": 2.0, "PBL_1": 3.0, "PBL_2": 4.0, "MSR_1": 1.0, "MSR_9": 6.0}


def _row(rows, model):
    return next(r for r in rows if r["model"] == model)


def test_per_scorer_and_ensemble_rows_by_hand():
    out = _result(TABLE, ["A", "B"])
    s = out.summary
    assert s["judges"] == ["A", "B"] and s["judge"] == "A"
    assert s["results"] == s["per_judge"]["A"]
    a, b = _row(s["per_judge"]["A"], "s1"), _row(s["per_judge"]["B"], "s1")
    # A: SA (6+2)/2 = 4, PBL 4 (PBL_1 unparseable), MSR 0, Avg. 12/4 = 3
    assert (a["sa"], a["pbl"], a["msr"], a["avg"], a["n"], a["failed"]) == (66.67, 66.67, 0.0, 50.0, 4, 1)
    assert (a["parse_missing"], a["call_failures"]) == (1, 0)
    # B: SA 3 (SA_2 unparseable), PBL nothing valid (PBL_2's call failed: no record), MSR 5, Avg. 8/2
    assert (b["sa"], b["pbl"], b["msr"], b["avg"], b["n"], b["failed"]) == (50.0, None, 83.33, 66.67, 2, 2)
    assert (b["parse_missing"], b["call_failures"]) == (2, 1)
    # the ensemble: per answer the mean of the valid scores: SA_1 4.5, SA_2 2, PBL_1 none, PBL_2 4, MSR_1 2.5
    assert s["ensemble"]["rule"] == "mean" and s["ensemble"]["description"]
    e = _row(s["ensemble"]["results"], "s1")
    assert (e["sa"], e["pbl"], e["msr"], e["avg"]) == (54.17, 66.67, 41.67, 54.17)
    assert (e["score_sa"], e["score_avg"], e["n"], e["failed"], e["n_pbl"], e["failed_pbl"]) == (3.25, 3.25, 4, 1, 1, 1)
    assert (e["parse_missing"], e["call_failures"]) == (3, 1)  # the panel's together
    e2 = _row(s["ensemble"]["results"], "s2")  # (3+5.5+1.5+2+5)/5 = 3.4
    assert e2["avg"] == round(3.4 / 6 * 100, 2) and e2["sa"] == round(4.25 / 6 * 100, 2)

    # CSVs: one scores row per (system, item, scorer); categories per scorer and the ensemble
    scores = out.tables["scores"]
    assert len(scores) == 20 and [r["judge"] for r in scores[:2]] == ["A", "B"]
    failed = next(r for r in scores if r["system"] == "s1" and r["id"] == "PBL_2" and r["judge"] == "B")
    assert (failed["outcome"], failed["failed_stage"], failed["score"]) == ("failed", "score", None)
    assert out.failed_items == ["s1: item PBL_2 (score, B): HTTP 500"]
    assert [(r["judge"], r["model"]) for r in out.tables["categories"]] == [
        ("A", "s1"), ("A", "s2"), ("B", "s1"), ("B", "s2"), (ENSEMBLE, "s1"), (ENSEMBLE, "s2")]
    assert {r["judge"] for r in out.tables["fields"]} == {"A", "B", ENSEMBLE}
    assert {r["judge"] for r in out.tables["distribution"]} == {"A", "B"}  # whole scores only
    assert len(out.tables["answers"]) == 10  # once per answer
    # printed: a scorer column, each figure with its interval
    assert [(d["scorer"], d["model"]) for d in out.display][-1] == (ENSEMBLE, "s2")
    d = out.display[0]
    assert d["Avg."] == f"50.00 [{a['avg_ci_low']:.2f}, {a['avg_ci_high']:.2f}]"
    assert any(n.startswith("[low, high]: 95% percentile bootstrap") for n in out.notes)


def _alpha(units: list[list[float]]) -> float:
    """Krippendorff's alpha, interval metric, from its definition (units: the values each got)."""
    units = [u for u in units if len(u) >= 2]
    values = [v for u in units for v in u]
    n = len(values)
    d_o = sum(sum((x - y) ** 2 for i, x in enumerate(u) for j, y in enumerate(u) if i != j) / (len(u) - 1)
              for u in units) / n
    d_e = sum((x - y) ** 2 for i, x in enumerate(values) for j, y in enumerate(values) if i != j) / (n * (n - 1))
    return 1 - d_o / d_e


def test_agreement_per_system_and_pooled():
    agree = _result(TABLE, ["A", "B"], samples=0).summary["agreement"]
    assert [(a["quantity"], a["system"], a["level"]) for a in agree] == [
        ("score (0-6)", "s1", "interval"), ("score (0-6)", "s2", "interval"), ("score (0-6)", POOLED, "interval")]
    s1 = [[6, 3], [0, 5]]  # the units both scored validly
    s2 = [[3, 3], [5, 6], [1, 2], [2, 2], [6, 4]]
    assert _alpha(s1) == pytest.approx(1 - 17 / 14)  # D_o = (18 + 50) / 4, D_e = 168 / 12
    want = {"s1": (_alpha(s1), 2, 0.0), "s2": (_alpha(s2), 5, 0.4), POOLED: (_alpha(s1 + s2), 7, 2 / 7)}
    for a in agree:
        alpha, items, full = want[a["system"]]
        assert a["krippendorff_alpha"] == pytest.approx(alpha) and a["items"] == items
        assert a["full_agreement"] == pytest.approx(full) and a["judges"] == ["A", "B"]


def test_interval_columns_resample_the_items_the_figure_reads():
    out = _result(TABLE, ["A", "B"], samples=300)
    row = _row(out.summary["per_judge"]["A"], "s1")

    def iv(sums, key):  # the interval of these items' (numerator, denominator), as the benchmarks draw it
        return interval(sums, Options(bootstrap_samples=300), key=key, scale=SCALE)

    # A on s1: SA (6, 1) (2, 1); PBL (0, 0) for the unparseable PBL_1, (4, 1); Avg. every record
    cases = {"sa": iv({"SA_1": (6, 1), "SA_2": (2, 1)}, "A:s1:sa"),
             "pbl": iv({"PBL_1": (0, 0), "PBL_2": (4, 1)}, "A:s1:pbl"),
             "msr": iv({"MSR_1": (0, 1)}, "A:s1:msr"),
             "avg": iv({"SA_1": (6, 1), "SA_2": (2, 1), "PBL_1": (0, 0), "PBL_2": (4, 1), "MSR_1": (0, 1)},
                       "A:s1:avg")}
    for fig, want in cases.items():
        assert (row[f"{fig}_ci_low"], row[f"{fig}_ci_high"]) == (round(want.low, 2), round(want.high, 2)), fig
        assert row[f"{fig}_ci_low"] <= row[fig] <= row[f"{fig}_ci_high"]
    assert (row["pbl_ci_low"], row["pbl_ci_high"]) == (66.67, 66.67)  # one valid score: nothing varies
    ens = _row(out.summary["ensemble"]["results"], "s1")  # the ensemble's means, keyed as the ensemble
    want = iv({"SA_1": (4.5, 1), "SA_2": (2, 1), "PBL_1": (0, 0), "PBL_2": (4, 1), "MSR_1": (2.5, 1)},
              f"{ENSEMBLE}:s1:avg")
    assert (ens["avg_ci_low"], ens["avg_ci_high"]) == (round(want.low, 2), round(want.high, 2))
    iv = dict(out.summary["intervals"])
    holm = iv.pop("multiple_comparisons")  # Holm's adjustment, made by the results for the printed table
    assert iv == {"method": "percentile bootstrap over items", "samples": 300, "level": 0.95, "seed": 0}
    assert holm["method"] == "holm" and holm["family"] == len(out.summary["comparisons"])
    assert all("excludes_zero_holm" in c for c in out.summary["comparisons"])
    (title, shown_rows), = [m for m in out.more_displays if m[0].startswith("Avg. differences")]
    assert all("interval excludes 0 raw/Holm" in r for r in shown_rows)
    # off: no interval columns, no comparisons, the same point estimates
    off = _result(TABLE, ["A", "B"], samples=0)
    assert not any(k.endswith(("_ci_low", "_ci_high")) for r in off.summary["results"] for k in r)
    assert off.summary["comparisons"] == []
    stripped = [{k: v for k, v in r.items() if "_ci_" not in k} for r in out.summary["results"]]
    assert stripped == off.summary["results"]


def test_comparisons_are_paired_avg_differences():
    comps = _result(TABLE, ["A", "B"], samples=300).summary["comparisons"]
    assert [(c["judge"], c["metric"], c["a"], c["b"]) for c in comps] == [("A", "avg", "s1", "s2"),
                                                                          (ENSEMBLE, "avg", "s1", "s2")]
    a, e = comps
    assert a["items"] == 5 and a["difference"] == pytest.approx((12 / 4 - 17 / 5) * SCALE)
    assert e["difference"] == pytest.approx((13 / 4 - 17 / 5) * SCALE)
    for c in comps:
        assert c["ci_low"] <= c["difference"] <= c["ci_high"] and c["level"] == 0.95
        assert c["excludes_zero"] == (c["ci_low"] > 0 or c["ci_high"] < 0)


def test_table5_rows_per_scorer_by_hand():
    out = _result(TABLE, ["A", "B"], samples=0, human=HUMAN, system="s1")
    rows = {r["scorer"]: r for r in out.summary["alignment"]}
    assert list(rows) == ["A", "B", ENSEMBLE]
    assert all(r["system"] == "s1" and r["items"] == 5 for r in rows.values())  # MSR_9 is no item of s1
    a, b, e = rows["A"], rows["B"], rows[ENSEMBLE]
    # A against the humans on SA_1 SA_2 PBL_2 MSR_1: (6,5) (2,2) (4,4) (0,1)
    assert a["n"] == 4 and a["mse"] == pytest.approx(0.5) and a["mae"] == pytest.approx(0.5)
    assert a["cosine"] == pytest.approx(50 / math.sqrt(56 * 46))
    assert a["pearson"] == pytest.approx(14 / math.sqrt(20 * 10))
    # B on SA_1 and MSR_1 only: (3,5) (5,1)
    assert (b["n"], b["mse"], b["mae"], b["pearson"]) == (2, 10.0, 3.0, pytest.approx(-1.0))
    assert b["cosine"] == pytest.approx(20 / math.sqrt(34 * 26))
    # the ensemble: (4.5,5) (2,2) (4,4) (2.5,1)
    assert (e["n"], e["mse"], e["mae"]) == (4, pytest.approx(0.625), pytest.approx(0.5))
    assert set(a) == {"system", "scorer", "items", "n", "cosine", "mse", "mae", "pearson"}
    assert out.tables["alignment"] == out.summary["alignment"]
    (printed,) = [r for t, r in out.more_displays if t == "Human alignment (Table 5)"]
    assert [(r["scorer"], r["MSE"], r["MAE"]) for r in printed] == [("A", "0.50", "0.50"), ("B", "10.00", "3.00"),
                                                                    (ENSEMBLE, "0.62", "0.50")]  # 2 decimals: coefficients, as the page


# -- properties -------------------------------------------------------------------------------------
IDS = ["SA_1", "SA_2", "SA_3", "PBL_1", "PBL_2", "MSR_1", "MSR_2"]
VALUE = st.one_of(st.integers(0, 6), st.sampled_from([BAD, FAIL]))
PROPS = settings(max_examples=25, deadline=None, derandomize=True, database=None)


@st.composite
def tables(draw, judges=("A", "B", "C")):
    systems = draw(st.lists(st.sampled_from(["s1", "s2", "s3"]), min_size=1, max_size=2, unique=True))
    ids = draw(st.lists(st.sampled_from(IDS), min_size=1, max_size=len(IDS), unique=True))
    return {s: {i: {j: draw(VALUE) for j in judges} for i in ids} for s in systems}


@PROPS
@given(table=tables())
def test_a_one_scorer_panel_is_the_single_scorer_and_joining_scorers_moves_nothing(table):
    one = _result(table, ["A"], samples=40)
    # the single scorer's rows: category_table over its records, and the intervals over its items
    records = [{"model": s, "category": CODES[i.split("_")[0]], "field": "f", "score": v}
               for s, per in table.items() for i, by in per.items() for v in [by["A"]] if v != FAIL]
    want = category_table([{**r, "score": None if r["score"] == BAD else r["score"]} for r in records])
    got = [{k: v for k, v in r.items() if k in want[0]} for r in one.summary["results"]] if want else []
    assert got == want
    assert not {"per_judge", "ensemble", "agreement"} & set(one.summary) and "agreement" not in one.tables
    assert one.summary["judges"] == ["A"]
    panel = _result(table, ["A", "B", "C"], samples=40)
    assert panel.summary["results"] == one.summary["results"]
    assert panel.summary["per_judge"]["B"] == _result(table, ["B"], samples=40).summary["results"]
    # Holm's adjustment depends on the family (the panel's holds every scorer's comparisons): the rest is the same
    def unadjusted(rows):
        return [{k: v for k, v in c.items() if k not in ("p_holm", "excludes_zero_holm")} for c in rows]
    assert unadjusted(c for c in panel.summary["comparisons"] if c["judge"] == "A") == unadjusted(one.summary["comparisons"])
    assert [r for r in panel.tables["scores"] if r["judge"] == "A"] == one.tables["scores"]
    # the panel's order does not change any scorer's figures or the ensemble's
    other = _result(table, ["C", "B", "A"], samples=40)
    assert other.summary["per_judge"] == panel.summary["per_judge"]
    assert other.summary["ensemble"] == panel.summary["ensemble"]


@PROPS
@given(table=tables(judges=("A",)), copies=st.integers(2, 3))
def test_the_ensemble_of_identical_scorers_is_that_scorer_and_they_agree_fully(table, copies):
    judges = ["A", *(f"copy{k}" for k in range(1, copies))]
    same = {s: {i: {j: by["A"] for j in judges} for i, by in per.items()} for s, per in table.items()}
    out = _result(same, judges, samples=0)
    figures = ("sa", "pbl", "msr", "avg", "score_sa", "score_pbl", "score_msr", "score_avg",
               "mean_of_categories", "n", "failed", "n_sa", "n_pbl", "n_msr")
    for mine, ens in zip(out.summary["results"], out.summary["ensemble"]["results"], strict=True):
        assert {k: mine[k] for k in figures} == {k: ens[k] for k in figures}
    for a in out.summary["agreement"]:
        pairable = [by["A"] for s, per in table.items() if a["system"] in (s, POOLED)
                    for by in per.values() if by["A"] not in (BAD, FAIL)]
        assert a["items"] == len(pairable)
        assert a["krippendorff_alpha"] == (1.0 if len(set(pairable)) > 1 else None)
        assert a["full_agreement"] == (1.0 if pairable else None)


def test_the_table5_runner_scores_the_human_rated_answers_by_a_panel_of_distinct_scorers():
    from judgekit.benchmarks.mmie.pipeline import prepare
    from judgekit.config import load_spec

    spec = load_spec("mmie_table5")
    prep = prepare(spec, Options.model_validate(spec.options))
    assert prep.judges == ["scorer-a", "scorer-b", "scorer-c"] and prep.judge == "scorer-a"
    assert [s.name for s in prep.systems] == [prep.human_system] == ["sample-native"]
    assert set(prep.human) == {i.id for i in prep.items} and len(prep.items) == 12
    styles = [spec.models[j].sim["judge_styles"][spec.models[j].model] for j in prep.judges]
    assert len({tuple(sorted(s.items())) for s in styles}) == 3  # three different scorers
