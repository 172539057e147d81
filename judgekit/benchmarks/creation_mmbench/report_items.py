"""Creation-MMBench's report items: one per question, with its images (and, for
Creation-MMBench-TO, the describer's description), its criteria, the baseline's and each
candidate's full answer, and every judge's pairwise and VFS reply in both orders.  Each reply
shows the verdict as parsed and highlights the line :mod:`judgekit.parsers.creation` read it from
(:func:`verdict_line`, :func:`vfs_lines`, which follow the parsers' rules); a re-asked judgment
shows the first reply too; failed calls, parse failures and re-asks are flagged."""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

from ...judging.pairwise import NO_VFS
from ...judging.report_items import by_candidate_and_item, item_score, judgment_flags, judgment_head
from ...parsers.creation import VERDICT_MARKER, VERDICT_SCORES, VFS_MARKER_A, VFS_MARKER_B
from ...report.doc import Block, Item, image, text
from .data import CreationItem
from .prediction_file import FAIL_MSG

__all__ = ["build_items", "judgment_blocks", "verdict_line", "vfs_lines"]


_DOUBLE = re.compile(r"\[\[\s*(.*?)\s*\]\]")
_VFS_STRIP = re.compile("[\u201c\u201d*]")


# -- where the parsers read their verdict --------------------------------------------------------
def verdict_line(reply: str | None) -> tuple[str, str] | None:
    """``(line, token)``: the line of ``reply`` :func:`~judgekit.parsers.creation.parse_verdict`
    reads its verdict from (stripped of surrounding white space) and the verdict token as the
    judge wrote it (``[[B>A]]``); None where the parser finds none."""
    for line in (reply or "").split("\n"):
        upper = line.upper()
        if VERDICT_MARKER not in upper:
            continue
        m = _DOUBLE.search(upper)
        if m is not None and m.group(1).replace(" ", "") in VERDICT_SCORES:
            return line.strip(), line[m.start():m.end()] if len(line) == len(upper) else m.group(0)
    return None


def vfs_lines(reply: str | None) -> tuple[str, str] | None:
    """The lines of ``reply`` :func:`~judgekit.parsers.creation.parse_vfs` reads the A and the B
    score from (the last that parses of each, stripped of surrounding white space), or None."""
    found: dict[str, str] = {}
    for line in (reply or "").strip().split("\n"):
        folded = _VFS_STRIP.sub("", line.upper())
        for key, marker in (("a", VFS_MARKER_A), ("b", VFS_MARKER_B)):
            if folded.startswith(marker):
                rest = folded.split(marker)[1].strip().split("/")[0].strip()
                try:
                    float(rest)
                except ValueError:
                    continue
                found[key] = line.strip()
    return (found["a"], found["b"]) if len(found) == 2 else None


def _vfs_highlight(reply: str, lines: tuple[str, str], order: int) -> str:
    """Both score lines where they stand together in the reply, else the candidate's."""
    a, b = lines
    for first, second in ((a, b), (b, a)):
        i = reply.rfind(first)
        if i >= 0:
            j = reply.find(second, i + len(first))
            if j >= 0 and reply[i + len(first):j].strip() == "":
                return reply[i:j + len(second)]
    return b if order == 0 else a


# -- one judgment as blocks ----------------------------------------------------------------------
def _verdict(j: Mapping[str, Any]) -> str:
    if j["kind"] == "pairwise":
        s = j.get("score")
        if s is None:
            return "no verdict"
        return f"{s:+d} for the candidate" if s else "0 (tie)"
    v = j.get("vfs")
    if isinstance(v, str) and v == NO_VFS:
        return "no VFS (empty reply: left out)"
    if v is None:
        return "no score"
    return f"candidate {v:g}/10, baseline {j['vfs_ref']:g}/10"


def _status(j: Mapping[str, Any]) -> str:
    if j.get("error_kind") in ("candidate_failed", "no_objective"):
        return "skipped"
    if not j.get("ok"):
        return "failed"
    return "ok"  # a re-asked one too: the first reply's block is marked "reasked"


def judgment_blocks(j: Mapping[str, Any], group: str, first_reply: str | None = None) -> list[Block]:
    """The blocks of one judgment record: the judge's reply with the parsed verdict (and, for a
    re-ask, the first reply that did not parse before it)."""
    kind = "pairwise" if j["kind"] == "pairwise" else "VFS"
    label, meta, out = judgment_head(j, f"{j['judge']} · {kind}", group, first_reply,
                                     length_note="candidate - baseline, as judged" if j["kind"] == "pairwise" else None)
    reply = j.get("judge_text") or ""
    verdict, highlight = _verdict(j), None
    if j["kind"] == "pairwise" and j.get("score") is not None:
        found = verdict_line(reply)
        if found is not None:
            highlight, token = found
            verdict = f"{token} -> {verdict}"
    elif j["kind"] == "vfs" and j.get("ok"):
        lines = vfs_lines(reply)
        if lines is not None:
            highlight = _vfs_highlight(reply, lines, int(j["order"]))
    parts = [text(reply)]
    if j.get("error_kind") == "candidate_failed":
        parts = [text("no judge call: the candidate's answer failed")]
    elif j.get("error"):
        parts = [text(f"call failed: {j['error']}")] + ([text(reply)] if reply else [])
    elif not j.get("ok") and j.get("error_kind") == "parse_failure":
        verdict = f"{verdict} (the reply does not parse)"
    out.append(Block("judgment", label, parts, group=group, verdict=verdict, highlight=highlight,
                     tone=_tone(j), status=_status(j), meta=meta))
    return out


def _tone(j: Mapping[str, Any]) -> str | None:
    """How a judgment reads for the candidate: a pairwise score (already the candidate's, in
    either order) good above 0, bad below, neutral at a tie; a VFS neutral; None with no verdict."""
    if j["kind"] == "pairwise":
        s = j.get("score")
        return None if s is None else "good" if s > 0 else "bad" if s < 0 else "neutral"
    v = j.get("vfs")
    return "neutral" if v is not None and not isinstance(v, str) else None


# -- items ---------------------------------------------------------------------------------------
def _question_block(item: CreationItem) -> Block:
    parts = [image(data=im.data, caption=item.image_paths[k] if k < len(item.image_paths) else None)
             for k, im in enumerate(item.images)]
    return Block("question", "question", [*parts, text(item.question)],
                 meta={"source": item.source} if item.source else {})


def _criteria_block(item: CreationItem) -> Block:
    parts = [text("General subjective criteria:\n" + item.subjective_criteria)]
    if item.vf_criteria is not None:
        parts.append(text("Visual factuality criteria:\n" + item.vf_criteria))
    if item.ground_truth:
        parts.append(text("Ground truth:\n" + item.ground_truth))
    return Block("reference", "criteria", parts)


def _answer_block(alias: str, a: Mapping[str, Any] | None, counted_failure: bool) -> Block:
    if a is None:
        return Block("answer", alias, [text("not run")], group=alias, status="skipped")
    if a.get("ok"):
        meta = {"output tokens": str(a["output_tokens"])} if a.get("output_tokens") is not None else {}
        return Block("answer", alias, [text(a.get("answer"))], group=alias, status="ok", meta=meta)
    judged = ("no judgment made (failed_answer_counts_as_failure)" if counted_failure
              else f"judged as the reference does, with the answer {FAIL_MSG!r}")
    return Block("answer", alias, [text(f"call failed: {a.get('error')}"), text(judged)], group=alias,
                 status="failed", meta={"error kind": str(a.get("error_kind"))})


def build_items(items: Sequence[CreationItem], answers: Sequence[Mapping[str, Any]],
                judgments: Sequence[Mapping[str, Any]], *, candidates: Sequence[str], judges: Sequence[str],
                first_replies: Mapping[tuple, str] | None = None, counted_failure: bool = False,
                descriptions: Mapping[str, Any] | None = None, describer: str | None = None) -> list[Item]:
    """One :class:`Item` per question: every item of the run, in the data's order (with the
    describer's description of the images, Creation-MMBench-TO, where there is one)."""
    first_replies = first_replies or {}
    ans, by_item, sums = by_candidate_and_item(answers, judgments, judges)
    judge_rank = {j: k for k, j in enumerate(judges)}
    out = []
    for item in items:
        blocks = [_question_block(item), _criteria_block(item),
                  Block("baseline", "baseline (GPT-4o, reference_answer_by_gpt4o)", [text(item.reference_answer)])]
        flags: list[str] = []
        if descriptions is not None and item.index in descriptions:
            d = descriptions[item.index]
            blocks.insert(1, Block("note", f"description by {describer} (what the candidates read for the images)",
                                   [text(d.text if d.ok else f"call failed: {d.error}")],
                                   status="ok" if d.ok else "failed"))
            if not d.ok:
                flags.append("failed")
        for alias in candidates:
            a = ans.get((alias, item.index))
            blocks.append(_answer_block(alias, a, counted_failure))
            if a is None:
                flags.append("not run")
            elif not a.get("ok"):
                flags += ["failed", "no answer"]
            own = sorted(by_item.get((alias, item.index), []),
                         key=lambda j: (judge_rank.get(j["judge"], len(judge_rank)), j["kind"] != "pairwise", j["order"]))
            for j in own:
                first = first_replies.get((j["judge"], alias, item.index, j["kind"], j["order"]))
                blocks += judgment_blocks(j, alias, first if j.get("reasked") else None)
                flags += judgment_flags(j)
        out.append(Item(id=item.index, title=item.task_name,
                        tags={"category": item.category, "task": item.task_name}, flags=flags,
                        blocks=blocks, score=item_score(sums, item.index, candidates)))
    return out
