"""What the pairwise and the rubric benchmarks share around their candidates: the ``[options]``
both have (columns, imported answers, the candidate prompt, defusing), where each candidate's
answers come from (a live model, or a file of imported answers), and the estimate's judge calls
with their possible re-ask."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field, field_validator

from ..benchmarks.base import PlannedCall
from ..benchmarks.calls import planned_reask
from ..config import STRICT_CONFIG
from ..errors import DataError, SpecError
from ..types import ChatRequest
from .human_agreement import HumanLabelOptions
from .items import Columns, GenericItem, load_answers
from .uncertainty import IntervalOptions

__all__ = ["CandidateOptions", "ImportedAnswers", "Sources", "candidate_sources", "answers_file", "judge_plan"]

class ImportedAnswers(BaseModel):
    """One imported candidate's answers, with the column that holds them:
    ``answers = { "model-a" = { file = "runs.csv", answer_column = "answer_a" } }``."""

    model_config = STRICT_CONFIG

    file: str = Field(description="the answers file (relative to the spec; the data file itself may be named)")
    answer_column: str | None = Field(None, description="the column of this candidate's answers (default: "
                                                        "options.answer_column)")


class CandidateOptions(IntervalOptions, HumanLabelOptions):
    """The ``[options]`` the generic benchmarks share (besides the bootstrap intervals and the
    human-labels file)."""

    model_config = STRICT_CONFIG

    columns: Columns = Field(default_factory=Columns, description="the data's column names")
    answers: dict[str, ImportedAnswers] = Field(
        default_factory=dict, description="imported answers: name -> file (JSONL, JSON, CSV, TSV, parquet with id "
        "and answer), or name -> { file = ..., answer_column = ... } to read that candidate's answers from a column "
        "of its own (two candidates may read two columns of one file)")
    answer_column: str = Field("answer", description="the answer column of the answers files (a candidate's own "
                                                     "answer_column wins)")
    candidate_prompt: str | None = Field(None, description="a prompt file for live answers (default: the images, "
                                                           "then the question)")
    defuse_answers: bool = Field(True, description="break verdict and score markers ([[B>>A]], [[A]], [[7]], [7], "
                                                   "Rating:) and answer-block delimiters inside an answer before "
                                                   "it enters the judge prompt, so it cannot forge the judge's output")

    @field_validator("answers", mode="before")
    @classmethod
    def _file_names(cls, v: Any) -> Any:
        """``name = "file"`` is ``name = { file = "file" }`` (the global answer_column)."""
        if isinstance(v, dict):
            return {k: {"file": ref} if isinstance(ref, str) else ref for k, ref in v.items()}
        return v


@dataclass
class Sources:
    """Where each candidate's answers come from."""

    candidates: list[str]                  # every candidate: roles.candidates in order, then the imported others
    live: list[str]                        # the candidates that answer live
    imported: dict[str, dict[str, str]]    # imported candidate -> item id -> answer


def answers_file(spec, options: CandidateOptions, ref: str | ImportedAnswers, items: list[GenericItem], *,
                 name: str | None = None) -> dict[str, str]:
    """The imported answers ``ref`` names (a file relative to the spec, or a file and its answer
    column): item id -> answer; ``name``: the candidate's key in ``options.answers``, which a
    missing column's message names."""
    file, column = (ref, None) if isinstance(ref, str) else (ref.file, ref.answer_column)
    path = spec.resolve_path(file)
    if not Path(path).exists():
        raise DataError(str(path), "no such answers file")
    setting = (f"options.answers.{name}.answer_column" if column is not None and name is not None
               else "options.answer_column")
    return load_answers(path, items, id_column=options.columns.id,
                        answer_column=column if column is not None else options.answer_column, setting=setting)


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
    imported = {n: answers_file(spec, options, ref, items, name=n) for n, ref in options.answers.items()
                if n in candidates}
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
