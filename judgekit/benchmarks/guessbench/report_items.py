"""GuessBench's report items: one per build set, every flow of the run as the conversation it was.

An item is a build set: the question (its three build images with their hints), the answer (a
reference block), the system prompt, then per (candidate, approach, task) one group of turns:

- ``user``: the message the turn added (the build image and the instruction; the refinement
  instruction with the previous guess; one-shot's worked example), rebuilt from the prompts and
  the set exactly as the flow built it (:class:`~judgekit.benchmarks.guessbench.messages.TurnPrompts`);
- ``assistant``: the guess; each self-consistency sample; each review round's reply;
- ``extractor``: each extractor's reading of the reply that is scored (every sample's, with
  self-consistency, then its vote), the verdict right/wrong, the extracted guess highlighted;
  image retrieval's query readings, then the retrieved image inside the round's user message;
- notes: a dynamic set that stopped at a right guess, the review loop's stop, a failed call.

Nothing here calls a model: every text comes from the flow's records (:class:`~.flow.SetOutcome`).
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any

from ...parsers.guess_reference import retrieval_guess
from ...report.doc import Block, Item, Part, image, text
from ...resources import load_prompt
from ...types import ImagePart, Message, TextPart
from .messages import TurnPrompts

if TYPE_CHECKING:
    from .data import GuessSet
    from .flow import Reading, SetOutcome, TurnRecord
    from .prepare import Prepared

__all__ = ["set_item", "find_last", "hint_parts", "APPROACH_NAMES"]

APPROACH_NAMES = {"cot": "CoT", "no_cot": "w/o CoT", "one_shot": "One-shot",
                  "self_consistency": "Self-Consistency", "self_refine": "Self-Refine",
                  "image_retrieval": "Image Retrieval", "image_only": "Image Only", "hint_only": "Hint Only"}
_NO_GUESS = "No Answering"
_NO_ANSWERING = re.compile(r"\bno\s+answering\b", re.IGNORECASE)


def find_last(needle: str | None, haystack: str) -> str | None:
    """The last occurrence of ``needle`` in ``haystack``, case-insensitively, as it is written in
    ``haystack`` (an extracted guess is lower-cased); None when it does not occur."""
    if not needle:
        return None
    found = None
    for m in re.finditer(re.escape(needle), haystack, re.IGNORECASE):
        found = m.group(0)
    return found


def _parts(msg: Message, caption: str | None = None, hint: str | None = None) -> list[Part]:
    """A message's parts; ``hint``, where a text holds it, split out in a fixed-width font (its
    letter line stands over its blanks)."""
    out: list[Part] = []
    for p in msg.parts:
        if isinstance(p, ImagePart):
            out.append(image(data=p.data, caption=caption))
        elif isinstance(p, TextPart):
            out += hint_parts(p.text, hint)
    return out


def hint_parts(s: str, hint: str | None) -> list[Part]:
    """``s`` as text parts, the last occurrence of ``hint`` in it (a non-blank one) as a mono part."""
    i = s.rfind(hint) if hint and hint.strip() else -1
    if i < 0:
        return [text(s)]
    before, after = s[:i].rstrip("\n"), s[i + len(hint):].lstrip("\n")
    return [*([text(before)] if before.strip() else []), text(hint, mono=True),
            *([text(after)] if after.strip() else [])]


class _Ctx:
    """What every item shares: the run's prompts per approach and the image store."""

    def __init__(self, prep: "Prepared", blobs: Any) -> None:
        self.prep, self.blobs = prep, blobs
        self.judges = list(prep.spec.roles.panel)
        o = prep.options
        self._prompts = {a: TurnPrompts(a, prep.example, o.retrieval_source) for a in o.approaches}
        self.system = load_prompt("guessbench/system.txt").text

    def prompts(self, approach: str) -> TurnPrompts:
        return self._prompts[approach]

    def retrieved(self, row: dict[str, Any]) -> Part:
        sha = row.get("sha256")
        cap = f"retrieved for {row['query']!r}" + (f" ({row['title']})" if row.get("title") else "")
        if self.blobs is None or not sha:
            return image(missing="no image store", caption=cap)
        try:
            return image(path=self.blobs.path(sha), caption=cap)
        except Exception:  # BlobMissing: the cache's image store was pruned
            return image(missing="not in the image store", caption=cap)


class _Flow:
    """The blocks of one (candidate, approach, task) on one set, and the flags they raise."""

    def __init__(self, ctx: _Ctx, alias: str, approach: str, task: str, gs: "GuessSet") -> None:
        self.ctx, self.alias, self.approach, self.task, self.gs = ctx, alias, approach, task, gs
        self.group = f"{alias} · {APPROACH_NAMES.get(approach, approach)} · {task}"
        self.blocks: list[Block] = []
        self.flags: list[str] = []
        self.prompts = ctx.prompts(approach)

    def add(self, label: str, parts: list[Part], role: str | None, *, kind: str = "turn", **kw: Any) -> Block:
        b = Block(kind, label, parts, group=self.group, role=role, **kw)  # type: ignore[arg-type]
        self.blocks.append(b)
        return b

    def label(self, attempt: int) -> str:
        return "static" if self.task == "static" else f"turn {attempt}"

    def user(self, attempt: int, previous: str | None) -> None:
        (_, msg), _ = self.prompts.turn(self.gs, attempt, previous)
        self.add(f"{self.label(attempt)} · user", _parts(msg, f"build {attempt}/3", self.gs.hints[attempt - 1]), "user")

    def run(self, out: "SetOutcome | None") -> None:
        if out is None:
            self.add("not run", [text("the run stopped before this flow (a later run resumes it)")], None,
                     kind="note", status="skipped")
            self.flags.append("not run")
            return
        previous: str | None = None
        for rec in out.turns:
            self.user(rec.turn, previous)
            self.turn(rec)
            if self.ctx.prep.options.previous_guess == "answer":
                previous = rec.guess if rec.guess is not None else _NO_GUESS
            else:
                previous = rec.extracted
        if out.error:
            # the turn that failed is not in the records (its calls did not all answer): its message
            attempt = 3 if self.task == "static" else len(out.turns) + 1
            if attempt <= 3:
                self.user(attempt, previous)
            self.add(f"{self.label(attempt)} · failed", [text(out.error)], None, kind="note", status="failed")
            self.flags.append("failed")
        elif self.task == "dynamic" and out.turns and out.turns[-1].correct and len(out.turns) < 3:
            k = out.turns[-1].turn
            later = "turn 3 counts" if k == 2 else "turns 2 and 3 count"
            self.add("stopped", [text(f"right at turn {k}: the set stops, and {later} as right")],
                     None, kind="note")

    def turn(self, rec: "TurnRecord") -> None:
        tl = self.label(rec.turn)
        if self.approach == "self_consistency":
            for i, reply in enumerate(rec.replies):
                self.add(f"{tl} · sample {i + 1}", [text(reply)], "assistant")
            for j in self.ctx.judges:
                self.samples(rec, j, tl)
            return
        self.add(f"{tl} · guess", [text(rec.replies[0] if rec.replies else "")], "assistant")
        if self.approach in ("self_refine", "image_retrieval"):
            self.review(rec, tl)
        for j in self.ctx.judges:
            rd = rec.readings.get(j)
            self.reading(rd, j, tl, rec)

    def review(self, rec: "TurnRecord", tl: str) -> None:
        """The review rounds: self-refine's quote of the reply under review, or image retrieval's
        query reading, search and retrieved image; then each round's reply."""
        queries = [e for e in rec.extractions if e["prompt"] == "extract_retrieval"]
        by_round = {r["round"]: r for r in rec.retrievals}
        for rnd in range(1, len(rec.replies)):
            under = rec.replies[rnd - 1]
            if self.approach == "self_refine":
                self.add(f"{tl} · round {rnd} · review", _parts(self.prompts.self_refine(under)), "user")
            else:
                self.query(queries[rnd - 1] if rnd - 1 < len(queries) else None, tl, rnd)
                row = by_round.get(rnd)
                if row is not None:
                    guess = retrieval_guess(queries[rnd - 1]["raw"]) if rnd - 1 < len(queries) else row["query"]
                    ask, build_line, photo_line = self.prompts.review
                    src = self.ctx.prep.options.retrieval_source
                    parts = [text(ask.render(previous_guess=guess, source=src)), text(build_line.text),
                             image(data=self.gs.images[rec.turn - 1].data, caption="the build"),
                             text(photo_line.text), self.ctx.retrieved(row)]
                    self.add(f"{tl} · round {rnd} · review", parts, "user", meta=_retrieval_meta(row))
            self.add(f"{tl} · round {rnd}", [text(rec.replies[rnd])], "assistant")
        if self.approach == "image_retrieval" and rec.stop not in ("well_done", "rounds"):
            # the loop ended on its way into a round: the query reading, and the search that found nothing
            nxt = len(rec.replies)
            if nxt - 1 < len(queries):
                self.query(queries[nxt - 1], tl, nxt)
            row = by_round.get(nxt)
            if row is not None:
                # nothing found is an outcome; a search or a fetch that failed is a failure
                status = "failed" if row["status"] in ("error", "image_error", "image_missing") else None
                if status == "failed":
                    self.flags.append("failed")
                self.add(f"{tl} · round {nxt} · search", [text(f"search for {row['query']!r}: {row['status']}"
                                                                + (f" ({row['error']})" if row.get("error") else ""))],
                         None, kind="note", status=status, meta=_retrieval_meta(row))
        self.add(f"{tl} · review stop", [text(_stop_text(rec.stop, len(rec.replies) - 1))], None, kind="note",
                 meta={"stop": rec.stop})

    def query(self, e: dict[str, Any] | None, tl: str, rnd: int) -> None:
        if e is None:
            return
        q = retrieval_guess(e["raw"]).strip()
        self.add(f"{tl} · round {rnd} · query ({e.get('judge', self.ctx.judges[0])})", [text(e["raw"])], "extractor",
                 verdict=f"search: {q}" if q else "no query", highlight=q or None)

    def reading(self, rd: "Reading | None", j: str, tl: str, rec: "TurnRecord") -> None:
        if rd is None or self.failed_reading(rd, f"{tl} · {j}"):
            return
        e = next((x for x in rd.extractions if x["prompt"] == "extract"), None)
        if e is None:
            return
        what = "the guess" if e["reply"] == 0 else f"round {e['reply']}'s reply"
        self.extraction(e, j, f"{tl} · {j}", verdict=_verdict(rd), meta={"reads": what}, tone=_tone(rd))

    def failed_reading(self, rd: "Reading", label: str) -> bool:
        """A reading whose extractor call failed outright: its block, marked failed (True)."""
        if rd.error is None or rd.extractions:
            return False
        self.add(label, [text(rd.error)], "extractor", status="failed", verdict="failed")
        self.flags.append("failed")
        return True

    def extraction(self, e: dict[str, Any], j: str, label: str, *, verdict: str, meta: dict[str, str],
                   tone: str | None = None) -> None:
        raw = e["raw"]
        if e["outcome"] == "answer":
            hl = find_last(e["guess"], raw)
        elif e["outcome"] == "no_answer":
            m = list(_NO_ANSWERING.finditer(raw))
            hl = m[-1].group(0) if m else None
            self.flags.append("no answer")
        else:
            hl = None
            self.flags.append("unparsed")
        if e["guess"] is not None:
            meta = {**meta, "guess": e["guess"]}
        self.add(label, [text(raw)], "extractor", verdict=verdict, highlight=hl, meta=meta, tone=tone)

    def samples(self, rec: "TurnRecord", j: str, tl: str) -> None:
        rd = rec.readings.get(j)
        if rd is None or self.failed_reading(rd, f"{tl} · {j}"):
            return
        for e in rd.extractions:
            if e["prompt"] != "extract":
                continue
            shown = {"answer": f"answer: {e['guess']}", "no_answer": _NO_GUESS}.get(e["outcome"], "unparsed")
            self.extraction(e, j, f"{tl} · sample {e['reply'] + 1} · {j}", verdict=shown, meta={})
        votes = ", ".join(f"{v} × {k!r}" for k, v in (rd.votes or {}).items())
        pick = rec.replies.index(rd.final_reply) + 1 if rd.final_reply in rec.replies else None
        line = f"vote of {j}: {votes or 'no votes'}" + (" (a tie)" if rd.vote_tied else "")
        if pick is not None:
            line += f"; the verdict is on sample {pick}"
        self.add(f"{tl} · vote · {j}", [text(line)], "extractor", verdict=_verdict(rd), tone=_tone(rd),
                 meta={"tied": "yes" if rd.vote_tied else "no"})


def _verdict(rd: "Reading") -> str:
    v = "right" if rd.correct else "wrong"
    if rd.outcome == "no_answer":
        return f"{v} · {_NO_GUESS}"
    if rd.outcome == "unparsed":
        return f"{v} · unparsed"
    return v


def _tone(rd: "Reading") -> str:
    """A reading's verdict colour: right good, wrong bad."""
    return "good" if rd.correct else "bad"


def _retrieval_meta(row: dict[str, Any]) -> dict[str, str]:
    return {k: str(row[k]) for k in ("query", "status", "url", "source") if row.get(k)}


def _stop_text(stop: str, rounds: int) -> str:
    if stop == "well_done":
        return f"round {rounds} said 'Well done!': the reply under review stands"
    if stop == "rounds":
        return f"every round was asked ({rounds}): the last reply stands"
    if stop == "no_guess":
        return "the query reading named no guess: the reply stands"
    if stop.startswith("retrieval_"):
        return f"the search ended the loop ({stop[len('retrieval_'):]}): the reply stands"
    return stop or "-"


def set_item(ctx: _Ctx, gs: "GuessSet", outcomes: dict[tuple[str, str, str, str], "SetOutcome"]) -> Item:
    """One build set with every flow of the run on it."""
    prep = ctx.prep
    hints: list[Part] = []
    for k in range(3):
        hints += [image(data=gs.images[k].data, caption=f"build {k + 1}/3"), text(f"Hint_{k + 1}:"),
                  text(gs.hints[k], mono=True)]
    blocks = [Block("question", f"set {gs.set_id}: the build at three stages, with its hints", hints),
              Block("reference", "answer", [text(gs.answer)],
                    meta={"letters": str(gs.letters), "length": "short" if gs.is_short else "long"}),
              Block("note", "system prompt (before every turn)", [text(ctx.system)])]
    flags: list[str] = []
    right = asked = 0
    for alias, approach, task in prep.flows:
        out = outcomes.get((alias, approach, task, gs.set_id))
        f = _Flow(ctx, alias, approach, task, gs)
        f.run(out)
        blocks += f.blocks
        flags += f.flags
        if out is not None and not out.error and out.correct:
            asked += 1
            right += bool(out.correct[-1])
    tags = {"length": "short" if gs.is_short else "long", "answer": gs.answer}
    return Item(id=gs.set_id, title=f"set {gs.set_id}: {gs.answer}", blocks=blocks, tags=tags,
                flags=list(dict.fromkeys(flags)), score=f"right {right}/{asked}" if asked else None)


def make_context(prep: "Prepared", blobs: Any) -> _Ctx:
    return _Ctx(prep, blobs)
