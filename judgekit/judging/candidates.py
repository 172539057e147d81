"""What the pairwise and the rubric benchmarks share around their candidates: the ``[options]``
both have (columns, imported answers, the candidate prompt, defusing), where each candidate's
answers come from (a live model, or a file of imported answers), and the estimate's judge calls
with their possible re-ask."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import Field

from ..benchmarks.base import PlannedCall
from ..benchmarks.calls import planned_reask
from ..config import STRICT_CONFIG
from ..errors import DataError, SpecError
from ..types import ChatRequest
from .human_agreement import HumanLabelOptions
from .items import Columns, GenericItem, load_answers
from .uncertainty import IntervalOptions

__all__ = ["CandidateOptions", "Sources", "candidate_sources", "answers_file", "judge_plan"]

class CandidateOptions(IntervalOptions, HumanLabelOptions):
    """The ``[options]`` the generic benchmarks share (besides the bootstrap intervals and the
    human-labels file)."""

    model_config = STRICT_CONFIG

    columns: Columns = Field(default_factory=Columns, description="the data's column names")
    answers: dict[str, str] = Field(default_factory=dict, description="imported answers: name -> file (JSONL, "
                                                                      "JSON, CSV, TSV, parquet with id and answer)")
    answer_column: str = Field("answer", description="the answer column of the answers files")
    candidate_prompt: str | None = Field(None, description="a prompt file for live answers (default: the images, "
                                                           "then the question)")
    defuse_answers: bool = Field(True, description="break verdict and score markers ([[B>>A]], [[A]], [[7]], [7], "
                                                   "Rating:) and answer-block delimiters inside an answer before "
                                                   "it enters the judge prompt, so it cannot forge the judge's output")


@dataclass
class Sources:
    """Where each candidate's answers come from."""

    candidates: list[str]                  # every candidate: roles.candidates in order, then the imported others
    live: list[str]                        # the candidates that answer live
    imported: dict[str, dict[str, str]]    # imported candidate -> item id -> answer


def answers_file(spec, options: CandidateOptions, ref: str, items: list[GenericItem]) -> dict[str, str]:
    """The imported answers file ``ref`` names (relative to the spec): item id -> answer."""
    path = spec.resolve_path(ref)
    if not Path(path).exists():
        raise DataError(str(path), "no such answers file")
    return load_answers(path, items, id_column=options.columns.id, answer_column=options.answer_column)


def candidate_sources(spec, options: CandidateOptions, items: list[GenericItem], *,
                      exclude: Sequence[str] = ()) -> Sources:
    """The candidates: ``roles.candidates`` (live, unless ``options.answers`` names them: then
    imported) and the other names of ``options.answers`` (imported) but those in ``exclude`` (the
    pairwise baseline's).  None at all is a SpecError."""
    live = [c for c in spec.roles.candidates if c not in options.answers]
    candidates = [*spec.roles.candidates,
                  *(n for n in options.answers if n not in spec.roles.candidates and n not in exclude)]
    if not candidates:
        raise SpecError(f"{spec.source_path}: roles.candidates: name at least one model to evaluate, or import "
                        f"answers with options.answers")
    imported = {n: answers_file(spec, options, ref, items) for n, ref in options.answers.items() if n in candidates}
    return Sources(candidates, live, imported)


async def judge_plan(req: ChatRequest, *, exact: bool, cached: Callable[[ChatRequest], Awaitable[str | None]],
                     parse: Callable[[str | None], Any], reask: Callable[[ChatRequest, str], ChatRequest] | None,
                     standin: str) -> list[PlannedCall]:
    """The estimate's calls for one judge request: the request, and with re-asks on (``reask``
    given) the re-ask its reply needs or may need (:func:`~judgekit.benchmarks.calls.planned_reask`)."""
    out = [PlannedCall("judge", req, exact=exact)]
    if reask is not None:
        out += await planned_reask(req, stage="judge", exact=exact, cached=cached,
                                   parses=lambda reply: parse(reply) is not None, reask=reask, standin=standin)
    return out
