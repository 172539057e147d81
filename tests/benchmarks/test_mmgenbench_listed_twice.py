"""MMGenBench: an image index listed twice in a pattern of the label index counts twice in that
pattern's SIM summary, as the reference's ``calTestSimScore`` (visual/run.py) appends each
listing; ``count_listed_index_once`` counts it once.  The load says how many there are.
Issue 25, point 4."""

import json

import numpy as np
import pytest
from PIL import Image

from judgekit.benchmarks.deviations import deviations
from judgekit.benchmarks.mmgenbench.data import load_data
from judgekit.benchmarks.mmgenbench.pipeline import Options
from judgekit.metrics.mmgenbench import sim_summary

LABELS = {"Color": [0, 2, 2], "Count": [2, 10, 10, 10], "Text": [1]}
SIMS = {"0": 0.2, "1": 0.4, "2": 0.6, "10": 0.9}


def _reference_pattern_summary(sims, label_index):
    """calTestSimScore restated: per pattern, one SIM per listed index."""
    out = {}
    for key, indices in label_index.items():
        values = [sims[str(i)] for i in indices]
        out[key] = (float(np.mean(values)), float(np.std(values)))
    return out


@pytest.fixture
def folder(tmp_path):
    d = tmp_path / "set"
    (d / "images").mkdir(parents=True)
    for i in (0, 1, 2, 10):
        Image.new("RGB", (8, 8), (20 * i, 0, 0)).save(d / "images" / f"{i}.png")
    (d / "labels.json").write_text(json.dumps(LABELS))
    return d


def test_each_listing_counts_as_in_the_reference(folder):
    data = load_data(folder)
    expected = _reference_pattern_summary(SIMS, LABELS)
    got = sim_summary(SIMS, data.listed_patterns())["patterns"]
    for name, (mean, std) in expected.items():
        assert (got[name]["mean"], got[name]["std"]) == (pytest.approx(mean), pytest.approx(std))
    assert got["Count"]["n"] == 4  # judgekit before issue 25: 2 (mean 0.75 instead of 0.825)


def test_once_counts_each_image_once(folder):
    got = sim_summary(SIMS, load_data(folder).listed_patterns(once=True))["patterns"]
    assert got["Count"]["n"] == 2 and got["Count"]["mean"] == pytest.approx(0.75)
    assert got["Color"]["n"] == 2 and got["Color"]["mean"] == pytest.approx(0.4)


def test_the_load_says_so_with_the_count(folder):
    data = load_data(folder)
    assert data.repeats == {("Color", 2): 2, ("Count", 10): 3}
    (note,) = data.notes()
    assert note.startswith("2 images listed more than once in a pattern of the label index (3 extra listings)")
    assert "count_listed_index_once" in note
    assert [it.patterns for it in data.items][2] == ("Color", "Count")  # an item's patterns stay one each


def test_option_is_a_named_deviation():
    assert deviations(Options()) == []
    (d,) = deviations(Options(count_listed_index_once=True))
    assert d["option"] == "count_listed_index_once" and "twice" in d["reference"]
