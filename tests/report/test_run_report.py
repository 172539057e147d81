"""The sections every run's report shares (judgekit.report.run_report), from summaries shaped as
the shipped runners write them: a judge panel (quickstart), a one-judge run with per-approach
comparisons (GuessBench), a run with no judge (MMGenBench); and the written page."""

from __future__ import annotations

import copy
import json
import math

from judgekit.report.doc import Chart, Headline, ReportDoc, Series, Table
from judgekit.report.run_report import interval_text, num, with_shared_sections, write_run_report

_BASE = {"status": "done", "cost_usd": 0.0123, "paid_calls": 208, "cache_hits": 5,
         "batch": {"calls": 0, "cost_usd": 0.0, "live_equivalent_usd": 0.0, "saved_usd": 0.0},
         "prompt_cache": {"calls": 4, "cached_input_tokens": 4352, "cache_write_tokens": 0, "saved_usd": 0.0021}}

# trimmed from `judgekit run quickstart` (a panel of two judges and an ensemble)
PANEL = dict(_BASE, benchmark="creation_mmbench", spec="quickstart", run_id="20261124-090441-9615d7",
             judge="judge", judges=["judge", "judge-2"],
             calls_by_provider={"openai": 200, "sim": 8},
             ensemble={"rule": "majority/mean", "description": "the verdict most judges gave", "results": []},
             intervals={"method": "percentile bootstrap over items", "samples": 1000, "level": 0.95, "seed": 0,
                        "item": "a (candidate, index): both orders resampled together"},
             agreement=[
                 {"quantity": "pairwise verdict", "model": "sim-strong", "judges": ["judge", "judge-2"],
                  "krippendorff_alpha": 0.14676, "level": "ordinal", "full_agreement": 0.2083, "items": 24},
                 {"quantity": "pairwise verdict", "model": "all", "judges": ["judge", "judge-2"],
                  "krippendorff_alpha": -0.3068, "level": "ordinal", "full_agreement": 0.2083, "items": 48}],
             comparisons=[
                 {"judge": "judge", "metric": "reward", "a": "sim-strong", "b": "sim-weak", "items": 12,
                  "difference": 81.25, "ci_low": 58.33, "ci_high": 104.17, "level": 0.95, "excludes_zero": True},
                 {"judge": "ensemble", "metric": "reward", "a": "sim-strong", "b": "sim-weak", "items": 12,
                  "difference": 62.5, "ci_low": -4.0, "ci_high": 77.08, "level": 0.95, "excludes_zero": False},
                 {"judge": "judge", "metric": "vfs", "a": "sim-strong", "b": "sim-weak", "items": 12,
                  "difference": 3.177, "ci_low": 2.712, "ci_high": 3.691, "level": 0.95, "excludes_zero": True}],
             deviations=[{"option": "defuse_answers", "value": True, "kind": "injection guard",
                          "reference": "puts both answers into the judge prompts verbatim",
                          "judgekit": "verdict tokens inside an answer are broken"},
                         {"kind": "dropped parameter", "note": "o3: temperature left out"}])

# trimmed from `judgekit run guessbench --limit 4`: one judge (the extractor), no ensemble, no agreement
ONE_JUDGE = dict(_BASE, benchmark="guessbench", spec="guessbench", run_id="r2", judge="extractor",
                 judges=["extractor"], calls_by_provider={"sim": 694, "sim_image_search": 42},
                 intervals={"method": "percentile bootstrap over items", "items": "build sets", "samples": 1000,
                            "level": 0.95, "seed": 0},
                 comparisons=[{"judge": "extractor", "approach": ap, "metric": "static_all", "a": "sim-strong",
                               "b": "sim-weak", "items": 4, "difference": d, "ci_low": 0.0, "ci_high": 100.0,
                               "level": 0.95, "excludes_zero": False} for ap, d in (("cot", 50.0), ("no_cot", 25.0))],
                 deviations=[])

# trimmed from `judgekit run mmgenbench --limit 4`: no judge at all
NO_JUDGE = dict(_BASE, benchmark="mmgenbench", spec="mmgenbench", run_id="r3", judges=[],
                calls_by_provider={"sim": 8, "local": 27},
                intervals={"method": "percentile bootstrap over items", "items": "images", "level": 0.95},
                comparisons=[{"judge": None, "generator": "tiny-sd", "metric": "sim", "a": "x", "b": "y", "items": 4,
                              "difference": 0.000464, "ci_low": -0.00135, "ci_high": 0.00167, "level": 0.95,
                              "excludes_zero": False}])


def _doc() -> ReportDoc:
    return ReportDoc(title="Creation-MMBench: quickstart", benchmark="creation_mmbench",
                     meta={"spec": "as the feeder says it", "data": "sample"},
                     headline=[Headline("sim-strong", "reward", 40.0, 30.0, 50.0, judge="ensemble")],
                     charts=[Chart("Reward", ["sim-strong"], [Series("reward", [40.0])])],
                     tables=[Table("Results", [{"model": "sim-strong", "reward": 40.0}])])


def test_panel_summary_meta_tables_and_chart_after_the_docs_own():
    doc = _doc()
    before = copy.deepcopy(doc)
    out = with_shared_sections(doc, PANEL)
    assert doc == before  # the benchmark's document is not changed
    m = out.meta
    assert m["spec"] == "as the feeder says it" and m["data"] == "sample"  # the document's own values win
    assert m["benchmark"] == "creation_mmbench" and m["run id"] == "20261124-090441-9615d7" and m["status"] == "done"
    assert m["judges"] == "judge, judge-2"
    assert m["ensemble"] == "majority/mean: the verdict most judges gave"
    assert m["calls"] == "208 made (openai 200; free: sim 8); 5 from the cache"
    assert m["cost"].startswith("$0.012") and "prompt cache: 4 calls, saved $0.0021" in m["cost"]
    assert "batch" not in m["cost"]  # no batch call
    assert m["intervals"] == "95% percentile bootstrap over items; 1,000 resamples, seed 0"
    assert out.headline == doc.headline  # left to the benchmark

    assert [t.title for t in out.tables] == ["Results", "Paired comparisons", "Judge agreement",
                                             "Departures from the authors' code"]
    comp = out.tables[1]
    assert comp.rows[0] == {"metric": "Reward", "judge": "judge", "a − b": "sim-strong − sim-weak",
                            "a − b [95% interval]": "81.2 [58.3, 104.2]", "items": 12, "excludes 0": "yes"}
    assert comp.rows[1]["excludes 0"] == "no" and comp.rows[1]["a − b [95% interval]"] == "62.5 [-4.0, 77.1]"
    assert comp.rows[2]["a − b [95% interval]"] == "3.18 [2.71, 3.69]"
    assert "both orders resampled together" in comp.note  # the summary's word on what an item is

    agree = out.tables[2].rows
    assert [r["candidate"] for r in agree] == ["sim-strong", "pooled (all)"]
    assert agree[0]["Krippendorff's α"] == "0.147" and agree[1]["Krippendorff's α"] == "-0.307"
    assert agree[0]["all agree"] == "21%" and agree[1]["items"] == 48 and agree[0]["judges"] == "judge, judge-2"

    dev = out.tables[3].rows
    assert dev[0]["what"] == "defuse_answers = True" and dev[0]["the authors' code"].startswith("puts both")
    assert dev[1]["kind"] == "dropped parameter" and dev[1]["what"] == "o3: temperature left out"

    assert [c.title for c in out.charts] == ["Reward", "Paired differences in Reward",
                                              "Paired differences in Visual factuality score (VFS)"]
    reward = out.charts[1]
    assert reward.groups == ["sim-strong − sim-weak"]  # one group per pair
    assert [(s.name, s.values, s.low, s.high) for s in reward.series] == [
        ("judge", [81.25], [58.33], [104.17]), ("ensemble", [62.5], [-4.0], [77.08])]
    assert "95% interval" in reward.note


def test_one_judge_summary_has_no_agreement_and_no_empty_tables():
    out = with_shared_sections(ReportDoc(title="t", benchmark="guessbench"), ONE_JUDGE)
    assert "ensemble" not in out.meta and out.meta["judges"] == "extractor"
    assert out.meta["calls"] == "736 made, all free (sim 694, sim_image_search 42); 5 from the cache"
    assert out.meta["intervals"].startswith("95% percentile bootstrap over items (resampling build sets)")
    assert [t.title for t in out.tables] == ["Paired comparisons"]  # no agreement; deviations [] left out
    assert [r["approach"] for r in out.tables[0].rows] == ["cot", "no_cot"]
    (chart,) = out.charts
    # the judge is the same in every row: the bars are named by the approach alone
    assert [s.name for s in chart.series] == ["cot", "no_cot"] and chart.groups == ["sim-strong − sim-weak"]


def test_comparisons_without_a_difference_draw_no_chart_and_no_row():
    """A run with pairwise = false: its Reward comparisons have no items and no difference (as
    benchmarks.uncertainty.comparisons writes them); only the VFS chart and rows are shown."""
    empty = {"metric": "reward", "a": "sim-strong", "b": "sim-weak", "items": 0, "difference": None,
             "ci_low": None, "ci_high": None, "level": 0.95, "excludes_zero": False}
    rows = [dict(empty, judge="judge"), dict(empty, judge="ensemble"), PANEL["comparisons"][2]]
    out = with_shared_sections(ReportDoc(title="t", benchmark="creation_mmbench"), dict(PANEL, comparisons=rows))
    assert [c.title for c in out.charts] == ["Paired differences in Visual factuality score (VFS)"]
    table = next(t for t in out.tables if t.title == "Paired comparisons")
    assert [r["metric"] for r in table.rows] == ["Visual factuality score (VFS)"]
    assert "2 comparisons without a difference (a figure the run did not make) left out" in table.note
    # none with a difference (NaN too): no chart and no table at all
    out = with_shared_sections(ReportDoc(title="t", benchmark="b"),
                               {"comparisons": [empty, dict(empty, metric="vfs", difference=float("nan"))]})
    assert out.charts == [] and out.tables == []


def test_no_judge_summary_and_missing_or_odd_keys():
    out = with_shared_sections(ReportDoc(title="t", benchmark="mmgenbench"), NO_JUDGE)
    assert "judges" not in out.meta
    row = out.tables[0].rows[0]
    assert "judge" not in row and row["generator"] == "tiny-sd"  # a context that is None everywhere is no column
    assert row["a − b [95% interval]"] == "0.0005 [-0.0014, 0.0017]"  # SIM: 4 decimals, as the terminal
    assert [s.name for s in out.charts[0].series] == ["SIM"]  # the key in words
    # an empty summary, or keys of a shape no runner writes, add nothing and raise nothing
    for s in ({}, {"comparisons": "x", "agreement": {"a": 1}, "deviations": None, "intervals": [], "judges": "j",
                   "cost_usd": float("nan"), "calls_by_provider": {"sim": "many"}, "ensemble": ["mean"]}):
        out = with_shared_sections(ReportDoc(title="t", benchmark="b"), s)
        assert out.tables == [] and out.charts == []
        assert set(out.meta) <= {"calls"}


def test_numbers():
    assert num(None) == num(float("nan")) == num(math.inf) == num("7") == "–"
    assert num(-0.00001, 1) == "0.0"  # never "-0.0"
    assert num(1234.5) == "1234.5" and num(0.012345) == "0.0123"
    assert interval_text(0.5, None, None) == "0.500"
    assert interval_text(None, 1.0, 2.0) == "–"  # no estimate, no figure
    assert interval_text(0.0, 0.0, 0.0) == "0.0 [0.0, 0.0]"


def test_written_report_holds_the_shared_sections(tmp_path):
    page = write_run_report(tmp_path, _doc(), PANEL)
    assert page == tmp_path / "report.html" and page.is_file()
    data = json.loads((tmp_path / "report.json").read_text(encoding="utf-8"))
    assert [t["title"] for t in data["tables"]][1:] == ["Paired comparisons", "Judge agreement",
                                                       "Departures from the authors' code"]
    assert data["meta"]["run id"] == "20261124-090441-9615d7"
    html = page.read_text(encoding="utf-8")
    assert "Paired differences in Reward" in html and "Krippendorff" in html and "defuse_answers = True" in html


def test_nan_anywhere_in_the_document_is_written_as_null(tmp_path):
    nan, inf = float("nan"), float("inf")
    doc = ReportDoc(title="t", benchmark="mmie", headline=[Headline("a", "avg", nan, -inf, inf)],
                    charts=[Chart("c", ["g"], [Series("s", [nan], [nan], [inf])], range=(0.0, nan))],
                    tables=[Table("pearson", [{"model": "a", "pearson": nan, "per": [1.0, inf], "x": {"y": nan}}])])
    write_run_report(tmp_path, doc, {})
    data = json.loads((tmp_path / "report.json").read_text(encoding="utf-8"))  # strict JSON: no NaN
    assert [data["headline"][0][k] for k in ("candidate", "value", "low", "high")] == ["a", None, None, None]
    assert data["charts"][0]["series"][0] == {"name": "s", "values": [None], "low": [None], "high": [None]}
    assert "range" not in data["charts"][0]
    assert data["tables"][0]["rows"] == [{"model": "a", "pearson": None, "per": [1.0, None], "x": {"y": None}}]
    assert math.isnan(doc.headline[0].value)  # the benchmark's document is not changed


def test_a_resumed_run_reports_its_processes_money():
    resumed = dict(_BASE, cost_usd=0.1634, this_process={"run_id": "b", "cost_usd": 0.0, "paid_calls": 0},
                   earlier_processes=[{"run_id": "a", "status": "killed", "cost_usd": 0.1634}])
    out = with_shared_sections(ReportDoc(title="t", benchmark="b"), resumed)
    assert out.meta["cost"].startswith("$0.1634 over 2 processes ($0.00 in this one)")
    one = with_shared_sections(ReportDoc(title="t", benchmark="b"), dict(_BASE, this_process={"cost_usd": 0.0123},
                                                                        earlier_processes=[]))
    assert one.meta["cost"].startswith("$0.0123") and "process" not in one.meta["cost"]
