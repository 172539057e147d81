"""The shipped sample's made-up human ratings (data/creation_mmbench/human_ratings.csv) and their
generator (data/build/creation_mmbench_sample.py): deterministic, what the ratings reader reads, covering the
Table 4 sample runner's candidates on every sample item, the raters' spread and leniency as
documented, and the reference verdict that of a noiseless simulated judge run."""

from __future__ import annotations

import csv
import statistics

import pytest

from judgekit.benchmarks.creation_mmbench.data import load_tsv, read_human_rating_table, read_human_ratings
from creation_mmbench_sample import (
    HUMAN_RATERS,
    HUMAN_RATINGS_RUNNER,
    human_ratings,
    read_reference,
    reference_verdicts,
    write_human_ratings,
)
from judgekit.config import load_spec
from judgekit.resources import samples_dir

RATINGS = samples_dir() / "creation_mmbench" / "human_ratings.csv"
RATERS = tuple(c for c, _, _ in HUMAN_RATERS)


def test_the_generator_is_deterministic_and_each_item_has_its_own_stream():
    ref = {("m", str(i)): (i % 5) - 2 for i in range(30)} | {("n", "3"): 1}
    rows = human_ratings(ref, seed=0)
    assert rows == human_ratings(dict(reversed(list(ref.items()))), seed=0)
    assert rows != human_ratings(ref, seed=1)
    # an item's ratings do not depend on which other items are rated
    assert [r for r in rows if r["model"] == "n"] == human_ratings({("n", "3"): 1}, seed=0)
    assert [(r["model"], r["index"]) for r in rows] == [("m", str(i)) for i in range(30)] + [("n", "3")]
    for r in rows:
        assert all(r[c] in (-2, -1, 0, 1, 2) for c in RATERS) and r["sim_reference"] == ref[(r["model"], r["index"])]


def test_each_rater_rates_around_the_reference_with_their_spread_and_leniency():
    rows = human_ratings({("m", str(i)): 0 for i in range(3000)}, seed=5)
    for column, spread, leniency in HUMAN_RATERS:
        got = [r[column] for r in rows]
        # a rating is round(leniency + N(0, spread)): mean ~ leniency, variance ~ spread^2 + 1/12
        # (rounding), clamping at +-2 is rare this close to 0
        assert statistics.fmean(got) == pytest.approx(leniency, abs=0.06)
        assert statistics.pvariance(got) == pytest.approx(spread ** 2 + 1 / 12, rel=0.12)


def test_the_shipped_ratings_parse_cover_the_runner_and_regenerate_byte_for_byte(tmp_path):
    table = read_human_rating_table(RATINGS)
    spec = load_spec(HUMAN_RATINGS_RUNNER)
    indices = [it.index for it in load_tsv(samples_dir() / "creation_mmbench" / "sample.tsv").items]
    assert set(table) == {(m, i) for m in spec.roles.candidates for i in indices}
    assert all(set(v) == set(RATERS) for v in table.values())  # sim_reference is no rating column
    means = read_human_ratings(RATINGS)
    reference = read_reference(RATINGS)
    assert set(means) == set(reference)
    for key, ratings in table.items():
        assert means[key] == pytest.approx(sum(ratings.values()) / 4)
    # raters agree with each other about as the paper's volunteers did (supplement Table 7)
    for c in RATERS:
        mae = statistics.fmean(abs(v[c] - (sum(v.values()) - v[c]) / 3) for v in table.values())
        assert 0.4 < mae < 0.9
    again = write_human_ratings(tmp_path / "again.csv", reference)
    assert again.read_bytes() == RATINGS.read_bytes()


def test_the_reference_is_a_noiseless_simulated_judges_verdict(tmp_path):
    """The first two sample items through the runner's candidates and a noiseless judge give the
    shipped file's sim_reference (a change to the candidates' answers or the judge prompt means
    the file must be regenerated: see data/creation_mmbench/README.md)."""
    got = reference_verdicts(work_dir=tmp_path, limit=2)
    shipped = read_reference(RATINGS)
    assert len(got) == 6 and {shipped[k] for k in got} and got == {k: shipped[k] for k in got}
    with open(RATINGS, newline="", encoding="utf-8") as fh:
        assert next(csv.reader(fh)) == ["index", "model", *RATERS, "sim_reference"]
