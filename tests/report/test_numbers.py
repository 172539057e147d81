"""One number format per kind of figure (judgekit.report.numbers), and the terminal's tables and the
report page writing the same figure the same way: a pairwise run's overall Reward, Win Rate and VFS
(the terminal's results row against the page's leaderboard cell) and a paired comparison (the
terminal's comparisons table against the page's)."""

import re

import pytest

from judgekit.judging import report as judging_report
from judgekit.judging.results import comparison_display, display_row
from judgekit.report import numbers
from judgekit.report.doc import ReportDoc
from judgekit.report.render import render_html
from judgekit.report.run_report import with_shared_sections


def test_kinds_and_their_decimals():
    assert numbers.figure_kind("reward") == numbers.figure_kind("Win Rate") == "rate"
    assert numbers.figure_kind("Dynamic #1 · CoT", "%") == "rate"
    assert numbers.figure_kind("VFS") == numbers.figure_kind("Score (1-10)") == "score"
    assert numbers.figure_kind("SIM · tiny-sd") == numbers.figure_kind("SIM per pattern · flux", "SIM") == "similarity"
    assert numbers.figure_kind("SIM distribution · flux", "images") == "count"
    assert numbers.figure_kind("FID · flux") == "distance"
    assert numbers.figure_kind("Paired differences in Reward") == "rate"
    assert numbers.figure_kind("BT rating") is None


def test_intervals_keep_their_estimates_decimals_and_trailing_zeros():
    assert numbers.interval(12.5, 0, 25, 1) == "12.5 [0.0, 25.0]"
    assert numbers.interval(62.5, 41.666, 83.333, 1) == "62.5 [41.7, 83.3]"
    assert numbers.interval(-0.0001, None, 3, 2) == "0.00"  # no "-0.00"; half an interval is none
    assert numbers.interval(None, 1, 2, 1) == numbers.number(float("nan"), 1) == numbers.MISSING


def test_a_column_of_no_known_kind_has_one_number_of_decimals():
    # values a benchmark rounded keep their decimals, padded: "5.332" beside "2.320", not "2.32"
    assert [numbers.number(v, numbers.column_decimals([5.332, 2.32])) for v in (5.332, 2.32)] == ["5.332", "2.320"]
    assert numbers.column_decimals([1200.5, 3.25]) == 2
    assert numbers.column_decimals([3, 4, 5]) == 0
    # values not rounded: three significant digits of the largest
    assert numbers.column_decimals([2 / 3, 0.1 + 0.2]) == 3
    assert numbers.column_decimals([0.000461234, 0.00131234]) == 4
    assert numbers.column_decimals([1234.56789, 1 / 3]) == 1


def test_labels_put_keys_in_words():
    assert numbers.label("win_rate") == "Win rate" and numbers.label("reward") == "Reward"
    assert numbers.label("vfs") == "Visual factuality score (VFS)"
    assert numbers.label("some_new_key") == "Some new key" and numbers.label("Already Words") == "Already Words"


def _row(model, reward, win, vfs):
    return {"model": model, "level": "overall", "group": "all", "items": 24, "small_n": False,
            "reward": reward[0], "reward_ci_low": reward[1], "reward_ci_high": reward[2],
            "win_rate": win[0], "win_rate_ci_low": win[1], "win_rate_ci_high": win[2],
            "vfs": vfs[0], "vfs_ci_low": vfs[1], "vfs_ci_high": vfs[2], "vfs_ref": 5.0,
            "much_better": 5, "better": 10, "tie": 5, "worse": 2, "much_worse": 2, "fail": 0, "vfs_fail": 0,
            "pairwise_parse_ok": 1.0, "vfs_parse_ok": 1.0, "n_pairwise": 48, "n_vfs": 24}


def _leaderboard(page):
    body = page[page.index('class="lb"'):page.index("</table>", page.index('class="lb"'))]
    rows = re.findall(r"<tr>(.*?)</tr>", body, re.S)[1:]
    clean = lambda c: re.sub(r"<[^>]+>", "", c).strip()  # noqa: E731
    return {clean(re.findall(r"<th[^>]*>(.*?)</th>", r, re.S)[0]): [clean(c) for c in re.findall(r"<td[^>]*>(.*?)</td>", r, re.S)]
            for r in rows}


@pytest.mark.parametrize("values", [
    ((29.1666, 6.25, 54.1666), (62.5, 41.6666, 83.3333), (5.3325, 5.03, 5.6)),
    ((12.5, 0.0, 25.0), (50.0, 25.0, 75.0), (2.32, 2.0, 2.5)),
    ((-100.0, -100.0, -87.5), (0.0, 0.0, 0.0), (10.0, 9.996, 10.0)),
])
def test_terminal_and_page_write_a_figure_alike(values):
    reward, win, vfs = values
    row = _row("cand", reward, win, vfs)
    summary = {"judges": ["judge"], "results": [row]}
    doc = ReportDoc("t", "creation_mmbench", headline=judging_report.headline(summary, ["cand"]))
    page = _leaderboard(render_html(doc.to_json()))["cand"]
    term = display_row(row)
    assert [term["Reward"], term["Win Rate %"], term["VFS"]] == page


def test_terminal_and_page_write_a_comparison_alike():
    comps = [{"judge": "judge", "metric": m, "a": "x", "b": "y", "items": 24, "difference": d, "ci_low": lo,
              "ci_high": hi, "level": 0.95, "excludes_zero": lo > 0 or hi < 0}
             for m, d, lo, hi in (("reward", 29.1666, 6.25, 54.16), ("win_rate", 12.5, 0.0, 25.0),
                                  ("vfs", 0.3325, -0.1, 0.8))]
    table = next(t for t in with_shared_sections(ReportDoc("t", "b"), {"comparisons": comps}).tables
                 if t.title == "Paired comparisons")
    page = [next(v for k, v in r.items() if k.startswith("a − b [")) for r in table.rows]
    assert page == [comparison_display(c)["difference"] for c in comps] == [
        "29.2 [6.2, 54.2]", "12.5 [0.0, 25.0]", "0.33 [-0.10, 0.80]"]
    assert [r["metric"] for r in table.rows] == ["Reward", "Win rate", "Visual factuality score (VFS)"]
