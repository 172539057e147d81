"""Creation-MMBench sends an item's swapped order after its forward order's answer (each kind of
judgment on its own), so the second can hit the provider's prompt cache; items stay concurrent,
and the results are those of sending both orders at once."""

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
from offline_runners import offline_spec  # noqa: E402

TABLES = ("answers.csv", "judgments.csv", "summary.csv")
ITEMS = 6


def _text(req) -> str:
    return "\n".join(p.text for m in req.messages for p in m.parts if isinstance(p, TextPart))


async def _run(tmp: Path, name: str, monkeypatch) -> list[tuple[str, str, str]]:
    """The quickstart offline on ITEMS items; every engine call's start and end, in order:
    (event, stage, prompt text)."""
    events: list[tuple[str, str, str]] = []
    call = Engine.call

    async def recorded(self, req, *a, **kw):
        events.append(("start", req.stage, _text(req)))
        try:
            return await call(self, req, *a, **kw)
        finally:
            events.append(("end", req.stage, _text(req)))

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


def _check(events, orders) -> tuple[int, int]:
    """(swapped orders sent after their forward order's answer, most judge calls in flight at once)."""
    at = {}
    for i, (event, stage, text) in enumerate(events):
        if stage in ("pairwise", "vfs"):
            at.setdefault((event, orders[text]), i)
    after = 0
    for (event, (kind, order, cand, item)), i in at.items():
        if event == "start" and order == 1:
            forward_end = at[("end", (kind, 0, cand, item))]
            after += i > forward_end
    in_flight = peak = 0
    for event, stage, _ in events:
        if stage in ("pairwise", "vfs"):
            in_flight += 1 if event == "start" else -1
            peak = max(peak, in_flight)
    return after, peak


async def test_the_swapped_order_goes_after_the_forward_answer_with_the_same_results(tmp_path, monkeypatch):
    events = await _run(tmp_path, "ordered", monkeypatch)
    orders = _orders(tmp_path, "ordered")
    swapped = sum(1 for _, order, _, _ in orders.values() if order == 1)
    assert swapped >= 2 * ITEMS  # two candidates' pairwise judgments at least, and the VFS ones
    after, peak = _check(events, orders)
    assert after == swapped > 0  # every swapped order, after its own forward order's answer
    assert peak > 4  # yet many items' judgments in flight at once

    # both orders at once (what batch mode does, and the code did before): the same tables
    monkeypatch.setattr(pipeline, "_one_order_after_the_other", lambda prep: False)
    together = await _run(tmp_path, "together", monkeypatch)
    after_together, _ = _check(together, _orders(tmp_path, "together"))
    assert after_together < swapped  # the check can tell: at once, swapped orders start before answers
    for name in TABLES:
        assert (tmp_path / "ordered" / name).read_bytes() == (tmp_path / "together" / name).read_bytes(), name


@pytest.mark.parametrize("dual, batch, expected", [(True, False, True), (True, True, False), (False, False, False)])
def test_only_live_dual_evaluation_waits(dual, batch, expected):
    spec, _ = offline_spec("quickstart")
    data = spec.model_dump(exclude_none=True)
    data["models"]["judge"]["batch"] = batch
    from judgekit.config import RunSpec

    prep = pipeline.Prepared(RunSpec.model_validate(data), pipeline.Options(dual=dual), [])
    assert pipeline._one_order_after_the_other(prep) is expected
