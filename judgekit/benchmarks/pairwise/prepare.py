"""The generic pairwise benchmark's ``[options]`` and what a run prepares before any call: the
items, the imported answers, the baseline, the prompt templates (their placeholders checked
against the data's columns, :data:`JUDGE_FIELDS` and :data:`CANDIDATE_FIELDS`), the verdict parser,
and that the judges are chat models (:func:`check_judges`)."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Literal

from pydantic import Field

from ...config import STRICT_CONFIG
from ...errors import DataError, SpecError
from ...judging.candidates import CandidateOptions, answers_file, candidate_sources
from ...judging.ensemble import EnsembleOptions
from ...judging.repeats import RepeatOptions
from ...judging.human_agreement import HumanLabels, load_human_labels
from ...judging.items import GenericItem, load_items
from ...judging.roles import check_chat_models
from ...judging.template import Template, checked_template
from ...parsers.generic import ParserOptions, verdict_parser
from ...plural import plural

__all__ = ["Options", "Baseline", "Prepared", "prepare", "JUDGE_FIELDS", "CANDIDATE_FIELDS", "check_judges"]


#: the placeholders a pairwise judge prompt may use besides the data's columns
JUDGE_FIELDS = frozenset({"question", "answer_a", "answer_b", "reference", "criteria", "category", "id", "images"})
#: the placeholders a candidate prompt may use besides the data's columns
CANDIDATE_FIELDS = frozenset({"question", "images", "reference", "criteria", "category", "id"})


def check_judges(spec) -> None:
    """A judge is named, and every judge of the panel is a chat model (SpecError naming the role)."""
    if not spec.roles.panel:
        raise SpecError(f"{spec.source_path}: roles.judge: name the model that judges (or a panel in "
                        f"roles.judges)")
    check_chat_models(spec, "roles.judges" if spec.roles.judges else "roles.judge", spec.roles.panel)


class Options(CandidateOptions, ParserOptions, EnsembleOptions, RepeatOptions):
    """``[options]`` of a pairwise spec: those the generic benchmarks share (:class:`CandidateOptions`:
    the bootstrap intervals, columns, imported answers, the candidate prompt, defusing) and the
    verdict parser's ``scale``, ``regex`` and ``verdict_values`` (:class:`ParserOptions`, checked
    there: a regex that does not compile, a verdict value outside -2..2)."""

    model_config = STRICT_CONFIG

    judge_prompt: str = Field(description="the judge prompt file: relative to the spec, samples:REL, or a shipped "
                                          "prompt prompts:pairwise/arena_hard.txt")
    verdict: Literal["arena_hard", "mt_bench", "scale", "regex"] = Field(
        "arena_hard", description="how the judge's reply is read: [[A>>B]] family, MT-Bench's [[A]]/[[B]]/[[C]], "
                                  "a number on a scale (default 1-5, low = A much better), or options.regex")
    baseline_column: str | None = Field(None, description="a data column holding the baseline's answers")
    baseline_answers: str | None = Field(None, description="an answers file holding the baseline's answers")
    judge_system: str | None = Field(None, description="a system prompt file for the judge")
    both_orders: bool = Field(True, description="judge each pair in both orders (the swapped score negated); "
                                                "false: the baseline as Assistant A only")
    reask_on_parse_failure: bool = Field(False, description="an unreadable judge reply is followed by one request "
                                                            "for the verdict line")


@dataclass
class Baseline:
    """Whose answers each candidate's are judged against: a live model (``answers`` None), or
    answers imported from a file or read from a data column."""

    name: str
    source: Literal["model", "answers", "column"]
    answers: dict[str, str] | None = None

    def describe(self) -> str:
        return {"model": f"model {self.name} (answers live)", "answers": f"{self.name} (imported answers)",
                "column": f"data column '{self.name}'"}[self.source]


@dataclass
class Prepared:
    spec: Any
    options: Options
    items: list[GenericItem]
    candidates: list[str]                    # every candidate, live first (roles.candidates order)
    live: list[str]                          # the candidates that answer live
    imported: dict[str, dict[str, str]]      # imported candidate -> item id -> answer
    baseline: Baseline
    judge_template: Template
    parse: Callable[[str | None], Any]       # judgekit.parsers.generic verdict parser
    candidate_template: Template | None = None
    system_template: Template | None = None
    warnings: list[str] = field(default_factory=list)
    labels: HumanLabels | None = None        # options.human_labels, read


def _baseline(spec, options: Options, items: list[GenericItem]) -> Baseline:
    given = [(k, v) for k, v in (("roles.baseline", spec.roles.baseline),
                                 ("options.baseline_column", options.baseline_column),
                                 ("options.baseline_answers", options.baseline_answers)) if v]
    if len(given) != 1:
        named = ", ".join(k for k, _ in given) or "none"
        raise SpecError(f"{spec.source_path}: the pairwise benchmark needs exactly one baseline: roles.baseline (a "
                        f"model), options.baseline_column or options.baseline_answers (given: {named})")
    key, value = given[0]
    if key == "roles.baseline":
        if value in options.answers:
            answers = answers_file(spec, options, options.answers[value], items, name=value)
            return Baseline(value, "answers", answers)
        return Baseline(value, "model")
    if key == "options.baseline_answers":
        return Baseline(Path(value).stem, "answers", answers_file(spec, options, value, items))
    answers = {}
    for it in items:
        text = it.fields.get(value)
        if text is None or not str(text).strip():
            where = spec.data if spec.data.startswith("hf:") else str(spec.data_path())
            raise DataError(where, "no baseline answer (options.baseline_column)", row=it.row, column=value)
        answers[it.id] = str(text)
    return Baseline(value, "column", answers)


def _parser(spec, options: Options):
    opts: dict[str, Any] = {k: getattr(options, k) for k in ("scale", "regex", "verdict_values")
                            if getattr(options, k) is not None}
    if options.verdict == "regex" and not options.regex:
        raise SpecError(f"{spec.source_path}: options.regex: verdict = \"regex\" needs a pattern with a named group "
                        f"'verdict' or 'score'")
    try:
        return verdict_parser(options.verdict, **opts)
    except ValueError as e:
        raise SpecError(f"{spec.source_path}: options.regex: {e}") from None


def prepare(spec, options: Options, limit: int | None = None) -> Prepared:
    check_judges(spec)
    items = load_items(spec, options.columns, limit=limit)
    baseline = _baseline(spec, options, items)
    sources = candidate_sources(spec, options, items, exclude=(baseline.name,))
    candidates, live, imported = sources.candidates, sources.live, sources.imported
    if baseline.name in candidates:
        raise SpecError(f"{spec.source_path}: '{baseline.name}' is both the baseline and a candidate")
    if baseline.source == "model" and baseline.name not in spec.models:
        raise SpecError(f"{spec.source_path}: roles.baseline: '{baseline.name}' is not a model alias")
    columns = {name for it in items for name in it.fields}
    judge = checked_template(spec, options.judge_prompt, "options.judge_prompt", set(JUDGE_FIELDS) | columns)
    cand = (checked_template(spec, options.candidate_prompt, "options.candidate_prompt",
                             set(CANDIDATE_FIELDS) | columns) if options.candidate_prompt else None)
    system = (checked_template(spec, options.judge_system, "options.judge_system",
                               (set(JUDGE_FIELDS) - {"images"}) | columns) if options.judge_system else None)
    warnings = [f"{n}: no imported answer for {len(items) - len(a)} of {plural(len(items), 'item')}"
                for n, a in imported.items() if len(a) < len(items)]
    if baseline.answers is not None and len(baseline.answers) < len(items):
        warnings.append(f"baseline {baseline.name}: no answer for {len(items) - len(baseline.answers)} of "
                        f"{plural(len(items), 'item')} (their judgments are counted failures)")
    labels = (load_human_labels(spec.resolve_path(options.human_labels), kind="pairwise")
              if options.human_labels else None)
    return Prepared(spec, options, items, candidates, live, imported, baseline, judge, _parser(spec, options),
                    cand, system, warnings, labels)
