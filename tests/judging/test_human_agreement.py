"""Agreement with human labels (judgekit.judging.human_agreement): every figure against an
independent computation (kappa from its closed form written here, scipy's spearmanr and
kendalltau, MAE and consistency by their definitions), the bootstrap against a plain loop over
the same seeded draws, edge cases as properties, and the labels file's errors; the bootstrap
engine (judgekit.judging.human_tables): its resamples-last figures are table_figures' numbers bit
for bit, and add_human_agreement's columnar path gives the record walk's rows, odd records
included."""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pytest
import scipy.stats as st
from hypothesis import given, settings
from hypothesis import strategies as s

from judgekit.errors import DataError
from judgekit.judging.human_agreement import (ALL, FIGURES, agreement_display, HumanLabels, add_human_agreement,
                                              agreement_rows, load_human_labels, table_figures, unit_values)
from judgekit.judging.human_tables import _figures_last, _Layout, _running
from judgekit.judging.intervals import _draws, _rng
from judgekit.judging.uncertainty import IntervalOptions, min_items_for


# -- independent computations ------------------------------------------------------------------------------
def kappa_closed_form(a: list[float], b: list[float], weights: str) -> float | None:
    """Cohen's kappa from its definition: 1 - sum_ij w_ij p_ij / sum_ij w_ij p_i. p_.j over the
    categories both raters used (rounded half away from zero), in plain Python."""
    def cat(x: float) -> int:
        return int(math.copysign(math.floor(abs(x) + 0.5), x))
    ca, cb = [cat(x) for x in a], [cat(x) for x in b]
    cats = sorted(set(ca) | set(cb))
    n = len(ca)
    if n == 0:
        return None
    joint = {(i, j): 0.0 for i in cats for j in cats}
    for x, y in zip(ca, cb):
        joint[(x, y)] += 1.0 / n
    row = {i: sum(joint[(i, j)] for j in cats) for i in cats}
    col = {j: sum(joint[(i, j)] for i in cats) for j in cats}

    def w(i: int, j: int) -> float:
        return {"none": float(i != j), "linear": abs(i - j), "quadratic": (i - j) ** 2}[weights]
    observed = sum(w(i, j) * joint[(i, j)] for i in cats for j in cats)
    expected = sum(w(i, j) * row[i] * col[j] for i in cats for j in cats)
    return None if expected <= 1e-12 else 1.0 - observed / expected


def reference(j: list[float], p: list[float]) -> dict[str, float | None]:
    out: dict[str, float | None] = {
        "kappa": kappa_closed_form(j, p, "none"), "kappa_linear": kappa_closed_form(j, p, "linear"),
        "kappa_quadratic": kappa_closed_form(j, p, "quadratic"),
        "mae": sum(abs(x - y) for x, y in zip(j, p)) / len(j) if j else None,
        "consistency": 100.0 * sum(abs(x - y) <= 1 + 1e-9 for x, y in zip(j, p)) / len(j) if j else None}
    spread = len(set(j)) > 1 and len(set(p)) > 1
    out["spearman"] = float(st.spearmanr(j, p)[0]) if spread else None
    out["kendall"] = float(st.kendalltau(j, p)[0]) if spread else None
    return out


def figures_of(j: list[float], p: list[float]) -> dict[str, float | None]:
    vj, vp = np.unique(j), np.unique(p)
    t = np.zeros((1, len(vj), len(vp)))
    for x, y in zip(j, p):
        t[0, np.searchsorted(vj, x), np.searchsorted(vp, y)] += 1
    f = table_figures(t, vj, vp)
    return {k: (None if np.isnan(v[0]) else float(v[0])) for k, v in f.items()}


def close(a: float | None, b: float | None, tol: float = 1e-9) -> bool:
    return (a is None and b is None) or (a is not None and b is not None and abs(a - b) <= tol)


halves = s.sampled_from([-2.0, -1.5, -1.0, -0.5, 0.0, 0.5, 1.0, 1.5, 2.0])


@settings(max_examples=150, deadline=None)
@given(s.lists(s.tuples(halves, halves), min_size=1, max_size=40))
def test_every_figure_matches_its_independent_computation(pairs):
    j, p = [a for a, _ in pairs], [b for _, b in pairs]
    got, want = figures_of(j, p), reference(j, p)
    for name in FIGURES:
        assert close(got[name], want[name]), (name, got[name], want[name])


def test_known_small_table():
    # 4 units: two agree exactly, one off by 1, one off by 2 -> MAE 3/4, consistency 75 %
    j, p = [2.0, 1.0, 0.0, -2.0], [2.0, 1.0, 1.0, 0.0]
    got = figures_of(j, p)
    assert got["mae"] == pytest.approx(0.75) and got["consistency"] == pytest.approx(75.0)
    assert got["kappa"] == pytest.approx(kappa_closed_form(j, p, "none"))
    assert got["spearman"] == pytest.approx(st.spearmanr(j, p)[0])


def test_perfect_and_reversed_agreement():
    j = [-2.0, -1.0, 0.0, 1.0, 2.0]
    same = figures_of(j, j)
    assert all(same[k] == pytest.approx(1.0) for k in ("kappa", "kappa_linear", "kappa_quadratic", "spearman",
                                                         "kendall"))
    assert same["mae"] == 0.0 and same["consistency"] == 100.0
    rev = figures_of(j, j[::-1])
    assert rev["spearman"] == pytest.approx(-1.0) and rev["kendall"] == pytest.approx(-1.0)
    assert rev["kappa_quadratic"] < 0


# -- rows, units and the bootstrap ---------------------------------------------------------------------------
def records(judge: str, scores: dict[tuple[str, str], tuple[int | None, int | None]]) -> list[dict]:
    out = []
    for (model, index), both in scores.items():
        for order, score in enumerate(both):
            out.append({"judge": judge, "model": model, "index": index, "kind": "pairwise", "order": order,
                        "score": score})
    return out


def test_unit_values_pool_orders_or_keep_them():
    recs = records("j", {("m", "1"): (2, 1), ("m", "2"): (None, -1), ("m", "3"): (None, None)})
    recs.append({"judge": "j", "model": "m", "index": "1", "kind": "vfs", "order": 0, "score": 0})
    assert unit_values(recs, False) == {("m", "1", None): 1.5, ("m", "2", None): -1.0}
    assert unit_values(recs, True) == {("m", "1", 0): 2.0, ("m", "1", 1): 1.0, ("m", "2", 1): -1.0}


def _random_case(seed: int, items: int = 30):
    rng = np.random.default_rng(seed)
    truth = rng.integers(-2, 3, size=(2, items))
    labels, recs = {}, {"a": {}, "b": {}}
    for c, model in enumerate(("m1", "m2")):
        for i in range(items):
            second = float(np.clip(truth[c, i] + rng.integers(-1, 2), -2, 2))
            labels[(model, str(i), None)] = [float(truth[c, i]), second]
            for judge, noise in (("a", 0), ("b", 1)):
                recs[judge][(model, str(i))] = tuple(int(np.clip(truth[c, i] + rng.integers(-noise, noise + 1), -2, 2))
                                                     for _ in range(2))
    labels[("", "shared", None)] = [1.0]  # an item labelled for every candidate, judged for m1 only
    recs["a"][("m1", "shared")] = (1, 2)
    recs["b"][("m1", "shared")] = (0, 1)
    return HumanLabels("x.csv", labels), {j: records(j, r) for j, r in recs.items()}


def test_rows_match_independent_figures_and_a_plain_bootstrap():
    labels, recs = _random_case(3)
    options = IntervalOptions(bootstrap_samples=300, bootstrap_seed=5)
    values = {j: unit_values(r, False) for j, r in recs.items()}
    rows = agreement_rows(values, labels, ["m2", "m1"], options)
    assert [(r["judge"], r["model"]) for r in rows] == [("a", "m2"), ("b", "m2"), ("a", "m1"), ("b", "m1"),
                                                        ("a", ALL), ("b", ALL)]
    ref = labels.reference()
    for row in rows:
        keys = sorted(k for k in values[row["judge"]] if row["model"] in (ALL, k[0]))
        keys = [k for k in keys if k in ref or ("", k[1], None) in ref]
        jv = [values[row["judge"]][k] for k in keys]
        pv = [ref.get(k, ref.get(("", k[1], None))) for k in keys]
        assert row["n"] == len(keys) == row["items"]
        want = reference(jv, pv)
        for name in FIGURES:
            assert close(row[name], want[name]), (row["model"], name)
        # the interval: the same seeded draws over (candidate, item), each resample computed by scipy/closed form
        draws = np.concatenate(list(_draws(_rng(5, f"human:{row['model']}"), len(keys), 300)))
        for name in ("spearman", "mae", "kappa_quadratic"):
            stats = []
            for idx in draws:
                f = reference([jv[i] for i in idx], [pv[i] for i in idx])[name]
                if f is not None and not (isinstance(f, float) and math.isnan(f)):
                    stats.append(f)
            lo, hi = np.quantile(stats, [0.025, 0.975])
            assert row[f"{name}_ci_low"] == pytest.approx(lo) and row[f"{name}_ci_high"] == pytest.approx(hi)


def test_consistency_interval_is_wilsons_on_the_units_or_their_effective_count():
    """One unit per item: consistency's interval is Wilson's on the units.  Two units (orders) per
    item: Wilson's on n_eff = p (1 - p) / var, var the share's variance over the items."""
    from judgekit.judging.rates import wilson
    labels, recs = _random_case(3)
    values = {j: unit_values(r, False) for j, r in recs.items()}
    for row in agreement_rows(values, labels, ["m2", "m1"], IntervalOptions(bootstrap_samples=50)):
        k = round(row["consistency"] * row["n"] / 100.0)
        lo, hi = wilson(k, row["n"])
        assert row["consistency_ci_low"] == pytest.approx(100 * lo) and row["consistency_ci_high"] == pytest.approx(100 * hi)
    off = agreement_rows(values, labels, ["m2", "m1"], IntervalOptions(bootstrap_samples=0))
    assert all(r["consistency_ci_low"] is None for r in off)
    # by order: item i's two units; consistent ones: both of items 0-5, one of items 6-8, none of 9-11
    labels = HumanLabels("x.csv", {("m", str(i), o): [0.0] for i in range(12) for o in (0, 1)})
    judged = {("m", str(i), o): (0.0 if i < 6 or (i < 9 and o == 0) else 2.0) for i in range(12) for o in (0, 1)}
    (row,) = [r for r in agreement_rows({"j": judged}, labels, ["m"], IntervalOptions(bootstrap_samples=50))
              if r["model"] == "m"]
    a = np.array([2.0] * 6 + [1.0] * 3 + [0.0] * 3)
    p = a.sum() / 24
    n_eff = p * (1 - p) / (((a - 2 * p) ** 2).sum() / 24 ** 2)
    lo, hi = wilson(p * n_eff, n_eff)
    assert row["consistency"] == pytest.approx(100 * p)
    assert row["consistency_ci_low"] == pytest.approx(100 * lo) and row["consistency_ci_high"] == pytest.approx(100 * hi)


def test_orders_resampled_together_and_labels_per_order():
    labels = HumanLabels("x.csv", {("m", str(i), o): [float((i + o) % 5 - 2)] for i in range(12) for o in (0, 1)})
    recs = records("j", {("m", str(i)): ((i % 5) - 2, ((i + 1) % 5) - 2) for i in range(12)})
    rows = agreement_rows({"j": unit_values(recs, True)}, labels, ["m"], IntervalOptions(bootstrap_samples=200))
    overall = rows[-1]
    assert overall["n"] == 24 and overall["items"] == 12
    assert overall["mae"] == 0.0 and overall["kappa"] == pytest.approx(1.0)
    assert overall["mae_ci_low"] == 0.0 and overall["mae_ci_high"] == 0.0


def test_intervals_off_and_same_seed_same_rows():
    labels, recs = _random_case(4)
    values = {j: unit_values(r, False) for j, r in recs.items()}
    off = agreement_rows(values, labels, ["m1", "m2"], IntervalOptions(bootstrap_samples=0))
    assert all(r[f"{f}_ci_low"] is None for r in off for f in FIGURES)
    a = agreement_rows(values, labels, ["m1", "m2"], IntervalOptions(bootstrap_samples=100, bootstrap_seed=9))
    b = agreement_rows(values, labels, ["m1", "m2"], IntervalOptions(bootstrap_samples=100, bootstrap_seed=9))
    assert a == b
    assert [r["kappa"] for r in a] == [r["kappa"] for r in off]


def _finite_or_none(rows):
    for r in rows:
        for k, v in r.items():
            if isinstance(v, float):
                assert math.isfinite(v), (k, v)


@settings(max_examples=60, deadline=None)
@given(s.lists(s.tuples(s.integers(-2, 2), s.integers(-2, 2), s.booleans()), min_size=0, max_size=12),
       s.integers(0, 3))
def test_properties_no_nan_and_figures_in_range(units, seed):
    labels = HumanLabels("x.csv", {("m", str(i), None): [float(h)] for i, (_, h, _) in enumerate(units)}
                         or {("m", "none", None): [0.0]})
    recs = records("j", {("m", str(i)): (j, j if same else None) for i, (j, _, same) in enumerate(units)})
    rows = agreement_rows({"j": unit_values(recs, False)}, labels, ["m"],
                          IntervalOptions(bootstrap_samples=30, bootstrap_seed=seed))
    _finite_or_none(rows)
    assert rows[-1]["model"] == ALL and rows[-1]["n"] == len(units)
    for r in rows:
        for name in ("kappa", "kappa_linear", "kappa_quadratic", "spearman", "kendall"):
            for v in (r[name], r[f"{name}_ci_low"], r[f"{name}_ci_high"]):
                assert v is None or -1.0 - 1e-9 <= v <= 1.0 + 1e-9
        if r["n"] == 0:
            assert all(r[f] is None for f in FIGURES)
        if r["mae"] is not None:
            assert 0 <= r["mae"] <= 4 and 0 <= r["consistency"] <= 100
        if r["n"] == 1:  # one pair: no spread, no correlation, no interval beyond the point
            assert r["spearman"] is None and r["kendall"] is None
            assert r["mae_ci_low"] in (None, r["mae"])


def test_all_ties_have_no_correlation_but_a_mae():
    labels = HumanLabels("x.csv", {("m", str(i), None): [0.0] for i in range(6)})
    recs = records("j", {("m", str(i)): (0, 0) for i in range(6)})
    row = agreement_rows({"j": unit_values(recs, False)}, labels, ["m"], IntervalOptions(bootstrap_samples=50))[-1]
    assert row["spearman"] is None and row["kendall"] is None and row["kappa"] is None
    assert row["mae"] == 0.0 and row["consistency"] == 100.0


# -- the labels file -----------------------------------------------------------------------------------------
def test_csv_tsv_jsonl_read_alike(tmp_path):
    rows = [{"item": "q1", "candidate": "m", "rater": "r1", "verdict": "much better"},
            {"item": "q1", "candidate": "m", "rater": "r2", "verdict": "tie"},
            {"item": "q2", "candidate": "", "rater": "r1", "score": "-1"}]
    header = ["item", "candidate", "rater", "verdict", "score"]
    (tmp_path / "l.csv").write_text(",".join(header) + "\n" + "".join(",".join(r.get(h, "") for h in header) + "\n"
                                                                      for r in rows))
    (tmp_path / "l.tsv").write_text("\t".join(header) + "\n" + "".join("\t".join(r.get(h, "") for h in header) + "\n"
                                                                       for r in rows))
    (tmp_path / "l.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    for name in ("l.csv", "l.tsv", "l.jsonl"):  # a row gives a score or a verdict
        got = load_human_labels(tmp_path / name, kind="pairwise")
        assert got.values == {("m", "q1", None): [2.0, 0.0], ("", "q2", None): [-1.0]}
        assert got.reference() == {("m", "q1", None): 1.0, ("", "q2", None): -1.0}


def test_slot_verdicts_follow_the_order(tmp_path):
    f = tmp_path / "l.csv"
    f.write_text("index,model,order,verdict\n1,m,0,B>>A\n1,m,1,B>>A\n2,m,0,A=B\n2,m,1,A>B\n")
    got = load_human_labels(f, kind="pairwise")
    assert got.by_order
    assert got.values == {("m", "1", 0): [2.0], ("m", "1", 1): [-2.0], ("m", "2", 0): [0.0], ("m", "2", 1): [1.0]}


def test_rubric_scores_on_their_scale(tmp_path):
    f = tmp_path / "l.csv"
    f.write_text("id,candidate,score\na,m,7\nb,m,10\n")
    assert load_human_labels(f, kind="rubric", scale=(1.0, 10.0)).values == {("m", "a", None): [7.0],
                                                                              ("m", "b", None): [10.0]}


@pytest.mark.parametrize("name, text, kind, message", [
    ("l.csv", "candidate,score\nm,1\n", "pairwise", r"l\.csv, row 1, column 'item': no item"),
    ("l.csv", "item,candidate\nq,m\n", "pairwise", r"l\.csv, row 1: no 'score' or 'verdict' column"),
    ("l.csv", "item,verdict\nq,better\nq,great\n", "pairwise", r"l\.csv, row 2, column 'verdict': verdict 'great'"),
    ("l.csv", "item,score\nq,3\n", "pairwise", r"l\.csv, row 1, column 'score': score 3 outside -2\.\.2"),
    ("l.csv", "item,score,verdict\nq,,\n", "pairwise", r"l\.csv, row 1, column 'score': empty label"),
    ("l.csv", "item,score\nq,x\n", "pairwise", r"l\.csv, row 1, column 'score': score 'x' is not a number"),
    ("l.csv", "item,score\nq,nan\n", "pairwise", r"l\.csv, row 1, column 'score': score nan outside"),
    ("l.csv", "item,score,order\nq,1,2\n", "pairwise", r"l\.csv, row 1, column 'order': order '2'"),
    ("l.csv", "item,score,order\nq,1,0\nr,1,\n", "pairwise", r"l\.csv, column 'order': some rows have an order"),
    ("l.csv", "item,score,order\nq,5,0\n", "rubric", r"l\.csv, row 1, column 'order': a rubric judgment has no order"),
    ("l.csv", "item,score\nq,1,2\n", "pairwise", r"l\.csv, row 1: more cells than columns"),
    ("l.csv", "item,score\n", "pairwise", r"l\.csv: no labels"),
    ("l.jsonl", '{"item": "q", "score": 1}\n{oops\n', "pairwise", r"l\.jsonl, row 2: not JSON"),
    ("l.jsonl", '[1, 2]\n', "pairwise", r"l\.jsonl, row 1: the line is not a JSON object"),
    ("l.xlsx", "item,score\nq,1\n", "pairwise", r"l\.xlsx: a human-labels file is \.csv, \.tsv or \.jsonl"),
])
def test_bad_files_name_file_row_and_column(tmp_path, name, text, kind, message):
    f = tmp_path / name
    f.write_text(text)
    with pytest.raises(DataError, match=message):
        load_human_labels(f, kind=kind, scale=(-2.0, 2.0) if kind == "pairwise" else (1.0, 10.0))


def test_missing_and_non_utf8_files(tmp_path):
    with pytest.raises(DataError, match="no such file"):
        load_human_labels(tmp_path / "none.csv", kind="pairwise")
    f = tmp_path / "l.csv"
    f.write_bytes(b"item,score\n\xff,1\n")
    with pytest.raises(DataError, match="not UTF-8"):
        load_human_labels(f, kind="pairwise")


def test_shipped_sample_reads():
    root = Path(__file__).resolve().parents[2]
    got = load_human_labels(root / "data" / "pairwise" / "human_labels.csv", kind="pairwise")
    assert {k[0] for k in got.values} == {"sim-strong", "my-notes-model"} and len(got.values) == 14


def test_rows_from_too_few_items_are_flagged_and_printed_with_a_mark():
    labels, recs = _random_case(6, items=12)
    values = {j: unit_values(r, False) for j, r in recs.items()}
    rows = agreement_rows(values, labels, ["m1", "m2"], IntervalOptions(bootstrap_samples=0, min_items_for_interval=20))
    by = {(r["judge"], r["model"]): r for r in rows}
    # m1: its 12 items and the shared one (13); m2: 12; pooled: 25 (candidate, item) clusters
    assert by[("a", "m1")]["items"] == 13 and by[("a", "m2")]["items"] == 12 and by[("a", ALL)]["items"] == 25
    # kappa, the correlations and MAE need 100 items (FIGURE_MIN_ITEMS), more than the option's 20
    least = min_items_for(IntervalOptions(min_items_for_interval=20), FIGURES)
    assert least == 100 and all(r["small_n"] == (r["items"] < least) for r in rows)
    assert by[("a", "m2")]["small_n"] and by[("a", ALL)]["small_n"]
    assert agreement_display(by[("a", "m2")])["n"] == f"{by[('a', 'm2')]['n']}!"
    # the option raises the threshold: m1 with 121 items passes 121, m2 with 120 does not
    labels, recs = _random_case(6, items=120)
    values = {j: unit_values(r, False) for j, r in recs.items()}
    rows = agreement_rows(values, labels, ["m1", "m2"], IntervalOptions(bootstrap_samples=0, min_items_for_interval=121))
    by = {(r["judge"], r["model"]): r for r in rows}
    assert by[("a", "m1")]["items"] == 121 and not by[("a", "m1")]["small_n"] and by[("a", "m2")]["small_n"]
    assert agreement_display(by[("a", "m1")])["n"] == by[("a", "m1")]["n"]


# -- the bootstrap engine (judgekit.judging.human_tables) against table_figures and the record walk --------
@pytest.mark.parametrize("seed", range(6))
def test_resamples_last_figures_are_table_figures_bit_for_bit(seed):
    rng = np.random.default_rng(seed)
    nj, npv, k = int(rng.integers(1, 40)), int(rng.integers(1, 6)), int(rng.integers(1, 300))
    # J values in eighteenths (sums of their gaps are not exact), P whole or halves
    vj = np.unique(rng.integers(-36, 37, size=nj) / 18.0)
    vp = np.unique(rng.integers(-4, 5, size=npv) / 2.0)
    t = rng.poisson(rng.random((len(vj), len(vp), 1)) * rng.choice([0.3, 3.0, 30.0]),
                    size=(len(vj), len(vp), k)).astype(float)
    t[:, :, 0] = 0.0  # an empty table: every figure undefined
    got = _figures_last(t, _Layout(vj, vp, 1.0))
    # table_figures over the same memory (the bootstrap's tables were laid out so before)
    want = table_figures(t.transpose(2, 0, 1), vj, vp)
    for f in FIGURES:
        assert np.array_equal(got[f], want[f], equal_nan=True), f
    # and over contiguous tables: the same up to the MAE's order of summation
    dense = table_figures(np.ascontiguousarray(t.transpose(2, 0, 1)), vj, vp)
    for f in FIGURES:
        assert np.allclose(got[f], dense[f], rtol=1e-13, atol=0, equal_nan=True), f


@pytest.mark.parametrize("nj,npv", [(1, 1), (1, 4), (6, 1), (2, 2)])
def test_resamples_last_figures_of_one_value_or_one_label(nj, npv):
    """The running sums' edge cases: one J value (no lower J), one P value (no lower P)."""
    rng = np.random.default_rng(nj * 10 + npv)
    vj, vp = np.arange(nj) / 3.0 - 0.5, np.arange(npv) - 1.0
    t = rng.poisson(2.0, size=(nj, npv, 50)).astype(float)
    got = _figures_last(t, _Layout(vj, vp, 1.0))
    want = table_figures(t.transpose(2, 0, 1), vj, vp)
    for f in FIGURES:
        assert np.array_equal(got[f], want[f], equal_nan=True), f


def test_a_rows_own_j_values_give_the_figures_of_all_the_judges():
    """A row's tables over only the J values its units have (the bootstrap's layout per row), the
    kappas on the judge's categories: the same figures, bit for bit, as over every J value."""
    rng = np.random.default_rng(7)
    vj, vp = np.unique(rng.integers(-36, 37, size=30) / 18.0), np.arange(-2.0, 3.0)
    t = rng.poisson(1.5, size=(vj.size, vp.size, 200)).astype(float)
    seen = rng.random(vj.size) < 0.5
    seen[[0, -1]] = False, True  # the row lacks the lowest value (and its category, maybe)
    t[~seen] = 0.0
    whole = _Layout(vj, vp, 1.0)
    got = _figures_last(np.ascontiguousarray(t[seen]), _Layout(vj[seen], vp, 1.0, whole.cats))
    want = _figures_last(t, whole)
    for f in FIGURES:
        assert np.array_equal(got[f], want[f], equal_nan=True), f


def test_running_sums_are_cumsum():
    x = np.random.default_rng(0).integers(0, 9, size=(7, 4, 5)).astype(float)
    for axis in range(3):
        assert np.array_equal(_running(x, axis), np.cumsum(x, axis=axis))


def test_pooled_row_of_grouped_clusters_is_the_plain_bootstrap():
    """120 items with two judge values and two labels: the pooled row's clusters go in four groups
    (its draws counted per group), and its interval is still a plain loop over the same draws."""
    rng = np.random.default_rng(2)
    n = 120
    human = rng.integers(0, 2, size=n).astype(float)
    judged = np.where(rng.random(n) < 0.8, human, 1.0 - human) * 2.0 - 1.0
    labels = HumanLabels("x.csv", {(f"m{i % 2}", str(i), None): [human[i]] for i in range(n)})
    values = {"j": {(f"m{i % 2}", str(i), None): float(judged[i]) for i in range(n)}}
    rows = agreement_rows(values, labels, ["m0", "m1"], IntervalOptions(bootstrap_samples=100, bootstrap_seed=1))
    pooled = rows[-1]
    assert pooled["model"] == ALL and pooled["n"] == n
    keys = sorted(values["j"])
    jv = [values["j"][k] for k in keys]
    pv = [labels.reference()[k] for k in keys]
    draws = np.concatenate(list(_draws(_rng(1, f"human:{ALL}"), n, 100)))
    for name in ("kappa", "spearman", "kendall", "mae"):
        stats = [f for idx in draws
                 if (f := reference([jv[i] for i in idx], [pv[i] for i in idx])[name]) is not None]
        lo, hi = np.quantile(stats, [0.025, 0.975])
        assert pooled[f"{name}_ci_low"] == pytest.approx(lo) and pooled[f"{name}_ci_high"] == pytest.approx(hi)


def _odd_panel(rng: np.random.Generator, by_order: bool):
    """Two judges and an ensemble-like list over 3 candidates x 25 items, with failures, one-order
    items, records of another kind, records without a kind or an order, mean scores, unlabelled
    units, labels for every candidate, for an unknown candidate and an unknown item."""
    everyone = {}
    for judge in ("a", "b", "mean"):
        recs = []
        for m in ("m1", "m2", "m3"):
            for i in range(25):
                for order in (0, 1) if i % 7 else (0,):
                    r = {"judge": judge, "model": m, "index": str(i), "kind": "pairwise", "order": order,
                         "score": (None if rng.random() < 0.1 else
                                   float(rng.integers(-6, 7)) / 3 if judge == "mean" else int(rng.integers(-2, 3)))}
                    if i == 3:
                        del r["kind"]
                    if i == 4 and order == 0:
                        del r["order"]
                    recs.append(r)
                recs.append({"judge": judge, "model": m, "index": str(i), "kind": "vfs", "order": 0, "score": 2,
                             "vfs": 1.0})
        everyone[judge] = recs
    orders = (0, 1) if by_order else (None,)
    labels = {(m, str(i), o): [float(rng.integers(-2, 3)) for _ in range(int(rng.integers(1, 3)))]
              for m in ("m1", "m2", "m3") for i in range(22) for o in orders if i % 5}
    labels.update({("", str(i), o): [1.0] for i in (0, 5, 23) for o in orders})
    labels.update({("nobody", "1", orders[0]): [0.0], ("m1", "no-such-item", orders[0]): [2.0],
                   ("m2", "24", orders[0]): []})
    return everyone, HumanLabels("x.csv", labels)


@pytest.mark.parametrize("by_order", [False, True])
def test_columnar_rows_and_unmatched_are_the_record_walks(by_order):
    everyone, labels = _odd_panel(np.random.default_rng(5), by_order)
    options = IntervalOptions(bootstrap_samples=60, bootstrap_seed=3)
    summary, tables = {}, {}
    add_human_agreement(summary, tables, [], everyone, labels, ["m2", "m1", "m3"], options)
    walked = {j: unit_values(tuple(r), labels.by_order) for j, r in everyone.items()}
    assert summary["human_agreement"]["rows"] == agreement_rows(walked, labels, ["m2", "m1", "m3"], options)
    judged = {k for per in walked.values() for k in per}
    anyone = {(k[1], k[2]) for k in judged}
    unmatched = sum(1 for k in labels.values if (k not in judged if k[0] else (k[1], k[2]) not in anyone))
    assert summary["human_agreement"]["unmatched_units"] == unmatched > 0
