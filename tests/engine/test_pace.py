"""The smoothed pace behind each stage's ETA (engine.stats.Pace), driven on a fake clock the way
the display drives it: one sample a frame, completions arriving whole batches at a time."""

from __future__ import annotations

import random

from hypothesis import given, settings
from hypothesis import strategies as st

from judgekit.engine.stats import RunStats


def _batches(*, batch: int, period: float, frame: float, batches: int, jitter: float = 0.0, seed: bool = False,
             rs: int = 0, startup: float = 0.0) -> list[tuple[float, int, float | None]]:
    """One stage of ``batch * batches`` items finishing ``batch`` at a time every ``period`` s
    (each gap off by up to ``jitter`` of it) after ``startup`` s (a model loading), sampled every
    ``frame`` s: (time, done, ETA) a frame."""
    rnd = random.Random(rs)
    stats = RunStats()
    s = stats.stage("generate")
    s.total = batch * batches
    if seed:  # the estimate's pace, exact
        s.expect(batch / period)
    stats.sample(0.0)
    s.first_call = 0.0
    t, due, out = 0.0, startup + period * (1 + rnd.uniform(-jitter, jitter)), []
    while s.done < s.total:
        t += frame
        while t >= due and s.done < s.total:
            s.done += batch
            s.calls = s.done
            due += period * (1 + rnd.uniform(-jitter, jitter))
        stats.sample(t)
        out.append((t, s.done, s.eta_s()))
    return out


@settings(max_examples=150, deadline=None, derandomize=True)
@given(batch=st.integers(1, 64), period=st.floats(0.5, 30.0), frame=st.sampled_from([0.25, 1.0, 5.0]),
       batches=st.integers(6, 40), jitter=st.floats(0.0, 0.25), seed=st.booleans(), rs=st.integers(0, 9),
       startup=st.sampled_from([0.0, 1.0, 5.0]))
def test_eta_of_a_steady_batched_pace_never_jumps_nor_vanishes(batch, period, frame, batches, jitter, seed, rs,
                                                               startup):
    """A steady pace whose items finish in batches (a local model's), after a start-up of up to
    five batches' time (a model loading): after the first completion the ETA is always shown;
    and in the live view (a frame every 0.25 or 1 s), from the third batch on, it moves between
    frames by the time that passed give or take X = 15% of itself + the batches' own jitter + one
    frame.  (The 10-second window this replaces showed '-' between batches 10 s apart and jumped
    by up to two thirds of the ETA when a batch landed.)  Plain lines (every 5 s) see a batch's
    time only to within 5 s, so there the early completions may move it more."""
    frames = _batches(batch=batch, period=period, frame=frame, batches=batches, jitter=jitter, seed=seed, rs=rs,
                      startup=startup * period)
    if seed:
        assert frames[0][2] is not None  # the estimate's pace before any completion
    for (t0, d0, e0), (t1, d1, e1) in zip(frames, frames[1:]):
        if d1 > 0:
            assert e1 is not None, (t1, d1)
        if frame < 5 and d0 >= 3 * batch and d1 < batch * batches:
            x = 0.15 * e0 + jitter * period + frame
            assert abs(e1 - (e0 - (t1 - t0))) <= x, (t0, t1, d0, d1, e0, e1)
    assert frames[-1][2] == 0.0  # done


def test_a_steady_batch_pace_counts_down_between_batches():
    """32 items every 8 s: the ETA falls by the seconds that pass between batches and does not
    jump when a batch lands (the batch was expected)."""
    frames = _batches(batch=32, period=8.0, frame=1.0, batches=20)
    mid = [(t, e) for t, d, e in frames if 64 <= d <= 480]
    for (t0, e0), (t1, e1) in zip(mid, mid[1:]):
        assert abs(e0 - e1 - (t1 - t0)) < 0.5, (t0, e0, t1, e1)
    t, d, e = next(f for f in frames if f[1] == 320)
    assert abs(e - 320 / 4.0) < 8.0  # 320 left at 4 items/s


def test_seed_until_the_first_completion_then_the_measured_pace():
    stats = RunStats()
    s = stats.stage("judge")
    s.total = 100
    stats.sample(0.0)
    assert s.eta_s() is None  # no pace, no estimate: no ETA rather than a wrong one
    s.expect(2.0)  # the estimate: 2 calls a second
    assert s.eta_s() == 50.0
    stats.sample(5.0)
    assert s.eta_s() == 50.0  # still the estimate's, until something finishes
    s.first_call = 5.0
    for k in range(1, 6):  # the real pace is 10/s: 50 left, 5 s at that pace, 25 s at the estimate's
        s.done = 10 * k
        stats.sample(5.0 + k)
    assert 5.0 <= s.eta_s() <= 10.0  # the measured pace took over (the first measure weighs half or more)
    s.done = 100
    stats.sample(16.0)
    assert s.eta_s() == 0.0


def test_a_stall_lengthens_the_eta_smoothly_and_never_shows_none():
    stats = RunStats()
    s = stats.stage("encode")
    s.total = 400
    stats.sample(0.0)
    s.first_call = 0.0
    for k in range(1, 21):
        s.done = 5 * k
        stats.sample(float(k))
    steady = s.eta_s()
    assert abs(steady - 300 / 5) < 3
    etas = []
    for k in range(21, 81):  # a minute with nothing done
        stats.sample(float(k))
        etas.append(s.eta_s())
    assert all(e is not None for e in etas)
    assert etas[-1] > steady  # the stall shows as a later finish, not a frozen countdown
    assert all(abs(b - a) < 0.1 * a + 1.5 for a, b in zip(etas, etas[1:]))  # and grows smoothly


def test_a_stage_that_waits_measures_from_its_first_call():
    """A judge stage that waits 60 s for answers: its first completion is 10 items in the 1 s
    since its first call, not 10 items in 61 s."""
    stats = RunStats()
    s = stats.stage("judge")
    s.total = 110
    stats.sample(0.0)
    stats.sample(60.0)
    s.first_call = 60.0
    s.done = 10
    stats.sample(61.0)
    assert abs(s.eta_s() - 100 / 10.0) < 1.0


def test_total_changes_keep_their_reason():
    stats = RunStats()
    stats.plan("guess", 30)
    stats.plan("extract", 30)
    assert stats.total_changes() == []  # the plan itself is no change
    stats.drop("guess", 4, "sets that ended before their last turn or round")
    stats.drop("guess", 2, "sets that ended before their last turn or round")
    stats.drop("extract", 0, "nothing")  # nothing taken off: nothing said
    stats.plan("generate", 3, "images the answers asked for")
    assert stats.stage("guess").total == 24 and stats.stage("generate").total == 3 and stats.total == 57
    assert [(c.stage, c.delta, c.reason) for c in stats.total_changes()] == [
        ("guess", -6, "sets that ended before their last turn or round"),
        ("generate", 3, "images the answers asked for")]


def test_calls_ended():
    stats = RunStats()
    assert not stats.calls_ended()  # nothing planned yet
    stats.plan("a", 2)
    s = stats.stage("a")
    s.done = 2
    assert stats.calls_ended() and not stats.calls_ended(in_flight=1)  # a re-ask still out
