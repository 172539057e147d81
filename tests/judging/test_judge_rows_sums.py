"""judge_rows' per-item sums are summed when a judge's are first asked for, and are item_sums'."""

from judgekit.judging.pairwise import ENSEMBLE_JUDGE, item_sums
from judgekit.judging.results import judge_rows
from judgekit.judging.uncertainty import IntervalOptions


def _records():
    out = []
    for judge, shift in (("j1", 0), ("j2", 1)):
        for model in ("a", "b"):
            for i in range(6):
                for order in (0, 1):
                    score = None if (i + order + shift) % 5 == 0 else (i + shift + order) % 5 - 2
                    base = {"judge": judge, "model": model, "index": str(i), "task": "t", "category": "c",
                            "order": order}
                    out.append({**base, "kind": "pairwise", "score": score})
                    out.append({**base, "kind": "vfs", "vfs": (i * 3 + shift) % 11, "vfs_ref": 5})
    return out


def test_each_judges_sums_are_item_sums_of_its_records():
    everyone, _, _, sums = judge_rows(_records(), ["j1", "j2"], IntervalOptions(bootstrap_samples=50))
    assert set(sums) == {"j1", "j2", ENSEMBLE_JUDGE} and len(sums) == 3
    for judge in ("j2", ENSEMBLE_JUDGE, "j1"):
        assert sums[judge] == item_sums(everyone[judge])
        assert sums.get(judge) is sums[judge]  # summed once
    assert sums.get("nobody") is None


def test_no_sums_without_intervals():
    assert judge_rows(_records(), ["j1", "j2"], IntervalOptions(bootstrap_samples=0))[3] == {}
