"""Creation-MMBench, live, sends an item's first judgment of each kind (a forward order) alone and
the item's other judgments of that kind (the swapped order, the other candidate's orders) once it
has an answer, so they can hit the provider's prompt cache; each judge of a panel (the quickstart
has two) on its own; items stay concurrent, and the results are those of sending them all at
once."""

from __future__ import annotations

import csv
import sys
from pathlib import Path

import pytest

from judgekit.benchmarks.creation_mmbench import pipeline
from judgekit.engine import Engine
from judgekit.runner import RunOptions, run_spec
from judgekit.types import TextPart

sys.path.insert(0, str(Path(__file__).resolve().parent))
from offline_runners import offline_spec

TABLES = ("answers.csv", "judgments.csv", "summary.csv")
ITEMS = 6


def _text(req) -> str:
    return "\n".join(p.text for m in req.messages for p in m.parts if isinstance(p, TextPart))


async def _run(tmp: Path, name: str, monkeypatch) -> list[tuple[str, str, str, str]]:
    """The quickstart offline on ITEMS items; every engine call's start and end, in order:
    (event, stage, prompt text, model alias)."""
    events: list[tuple[str, str, str, str]] = []
    call = Engine.call

    async def recorded(self, req, *a, **kw):
        events.append(("start", req.stage, _text(req), req.model))
        try:
            return await call(self, req, *a, **kw)
        finally:
            events.append(("end", req.stage, _text(req), req.model))

    monkeypatch.setattr(Engine, "call", recorded)
    spec, _ = offline_spec("quickstart")
    out = await run_spec(spec, RunOptions(out_dir=tmp / name, cache_path=tmp / f"{name}.duckdb", limit=ITEMS,
                                          yes=True))
    assert out.exit_code == 0, out.message
    monkeypatch.setattr(Engine, "call", call)
    return events


def _orders(tmp: Path, name: str) -> dict[str, tuple[str, int, str, str]]:
    """Each judge prompt's text -> (kind, order, candidate, item), rebuilt from the run's answers."""
    spec, _ = offline_spec("quickstart")
    prep = pipeline.prepare(spec, pipeline.Options(**spec.options), ITEMS)
    builder = pipeline._Builder(prep)
    items = {it.index: it for it in prep.items}
    out = {}
    with open(tmp / name / "answers.csv", newline="", encoding="utf-8") as f:
        for row in csv.DictReader(f):
            for kind, order, req in builder.judge_requests(items[row["index"]], row["answer"]):
                out[_text(req)] = (kind, order, row["model"], row["index"])
    return out


def _check(events, orders) -> tuple[int, int, int, bool]:
    """(judge calls that are not their judge's first of a kind on the item, those started after
    that first one's answer, most judge calls in flight at once, every first one a forward order)."""
    first: dict[tuple[str, str, str], tuple] = {}  # (judge, kind, item) -> the judge's first call started
    ends: dict[tuple, int] = {}
    starts: list[tuple[int, tuple]] = []
    for i, (event, stage, text, judge) in enumerate(events):
        if stage in ("pairwise", "vfs"):
            call = (judge, *orders[text])  # (judge, kind, order, candidate, item)
            if event == "start":
                first.setdefault((judge, call[1], call[4]), call)
                starts.append((i, call))
            else:
                ends.setdefault(call, i)
    others = [(i, call) for i, call in starts if first[(call[0], call[1], call[4])] != call]
    after = sum(1 for i, call in others if i > ends[first[(call[0], call[1], call[4])]])
    in_flight = peak = 0
    for event, stage, _, _ in events:
        if stage in ("pairwise", "vfs"):
            in_flight += 1 if event == "start" else -1
            peak = max(peak, in_flight)
    return len(others), after, peak, all(call[2] == 0 for call in first.values())


async def test_an_items_judgments_follow_its_first_answer_with_the_same_results(tmp_path, monkeypatch):
    events = await _run(tmp_path, "ordered", monkeypatch)
    orders = _orders(tmp_path, "ordered")
    others, after, peak, forward_first = _check(events, orders)
    # per judge and item: a swapped order and the other candidate's two, pairwise alone
    assert others >= 2 * 3 * ITEMS
    assert after == others and forward_first  # every one after its item's first answer, a forward order
    assert peak > 4  # yet many items' judgments in flight at once

    # all at once (what batch mode does, and the code did before): the same tables
    monkeypatch.setattr(pipeline, "_first_judgment_alone", lambda prep, judge=None: False)
    together = await _run(tmp_path, "together", monkeypatch)
    others_together, after_together, _, _ = _check(together, _orders(tmp_path, "together"))
    assert others_together == others and after_together < others  # the check can tell the difference
    for name in TABLES:
        assert (tmp_path / "ordered" / name).read_bytes() == (tmp_path / "together" / name).read_bytes(), name


@pytest.mark.parametrize("batch, expected", [(False, True), (True, False)])
def test_only_a_live_judge_waits(batch, expected):
    spec, _ = offline_spec("quickstart")
    data = spec.model_dump(exclude_none=True)
    data["models"]["judge"]["batch"] = batch
    from judgekit.config import RunSpec

    prep = pipeline.Prepared(RunSpec.model_validate(data), pipeline.Options(), [])
    assert pipeline._first_judgment_alone(prep) is expected


def test_each_judge_of_a_panel_waits_by_its_own_batch_mode():
    spec, _ = offline_spec("quickstart")
    data = spec.model_dump(exclude_none=True)
    data["models"]["judge-2"]["batch"] = True
    from judgekit.config import RunSpec

    prep = pipeline.Prepared(RunSpec.model_validate(data), pipeline.Options(), [])
    assert pipeline._first_judgment_alone(prep, "judge") is True
    assert pipeline._first_judgment_alone(prep, "judge-2") is False
