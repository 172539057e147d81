"""The rubric benchmark's ``[options]`` and what a run prepares before any call: the items, the
imported answers, the judge's and the candidates' prompt templates (their placeholders checked
against the data's columns, :data:`JUDGE_FIELDS` and :data:`CANDIDATE_FIELDS`), the rubric, the
score parser, and that the judges and the live candidates are chat models (:func:`check_models`)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

from pydantic import Field, field_validator

from ...config import STRICT_CONFIG
from ...errors import DataError, SpecError
from ...judging.candidates import CandidateOptions, candidate_sources
from ...judging.human_agreement import HumanLabels, load_human_labels
from ...judging.items import GenericItem, load_items
from ...judging.repeats import RepeatOptions
from ...judging.roles import check_chat_models
from ...judging.template import Template, checked_template, text_or_file
from ...parsers.generic import score_parser

__all__ = ["Options", "Prepared", "prepare", "JUDGE_FIELDS", "CANDIDATE_FIELDS", "check_models"]

#: placeholders a rubric judge prompt may use besides the data's columns
JUDGE_FIELDS = ("question", "answer", "reference", "criteria", "rubric", "category", "id", "images")
#: placeholders a candidate prompt may use besides the data's columns
CANDIDATE_FIELDS = ("question", "images")


def check_models(spec, live: list[str]) -> None:
    """A judge is named and every judge and live candidate is a chat model (SpecError naming the role)."""
    if not spec.roles.panel:
        raise SpecError(f"{spec.source_path}: the rubric benchmark needs roles.judge (or a panel in roles.judges): "
                        "the model that grades the answers")
    check_chat_models(spec, "roles.judges" if spec.roles.judges else "roles.judge", spec.roles.panel,
                      verb="is not a chat model")
    check_chat_models(spec, "roles.candidates", live, verb="is not a chat model")


class Options(CandidateOptions, RepeatOptions):
    """``[options]`` of a rubric spec: those the generic benchmarks share (:class:`CandidateOptions`:
    the bootstrap intervals, columns, imported answers, the candidate prompt, defusing) and the
    rubric's own."""

    model_config = STRICT_CONFIG

    judge_prompt: str = Field(description="the judge's prompt file: relative to the spec, samples:REL or "
                                          "prompts:REL (a shipped one: prompts:rubric/mt_bench_single.txt)")
    score: Literal["rating", "last_number", "regex"] = Field(
        "rating", description="how the score is read: rating ([[N]], then [N]), last_number, regex "
                              "(options.regex with a group named 'score')")
    scale: tuple[float, float] = Field((1.0, 10.0), description="the scale (low, high); a score outside it is a "
                                                                 "parse failure")
    regex: str | None = Field(None, description="score = 'regex': a regular expression with a group named "
                                                "'score'; its last match is read")
    rubric: str | None = Field(None, description="the global rubric, a file or the text itself ({rubric}); an "
                                                 "item's criteria column wins where set")
    judge_system: str | None = Field(None, description="a system message for the judge (a file or the text)")
    reask_on_parse_failure: bool = Field(False, description="an unreadable judge reply is followed by one "
                                                            "request for the score line alone")

    @field_validator("scale", mode="before")
    @classmethod
    def _scale_list(cls, v: Any) -> Any:
        return tuple(v) if isinstance(v, list) else v  # TOML writes [1, 10]

    @field_validator("scale")
    @classmethod
    def _scale_order(cls, v: tuple[float, float]) -> tuple[float, float]:
        if not v[0] < v[1]:
            raise ValueError(f"the low end ({v[0]:g}) must be below the high end ({v[1]:g})")
        return v


@dataclass
class Prepared:
    spec: Any
    options: Options
    items: list[GenericItem]
    judge_template: Template
    candidate_template: Template | None
    rubric: str | None
    judge_system: tuple[str, str] | None  # (text, hash)
    #: every candidate in order: the live ones, then the imported ones
    candidates: list[str]
    live: list[str]
    #: imported candidate -> item id -> answer
    imported: dict[str, dict[str, str]]
    parse: Any = None
    warnings: list[str] = field(default_factory=list)
    labels: HumanLabels | None = None  # options.human_labels, read


def prepare(spec, options: Options, limit: int | None = None) -> Prepared:
    o = options
    items = load_items(spec, o.columns, limit=limit)
    sources = candidate_sources(spec, o, items)
    check_models(spec, sources.live)
    if o.regex is not None and o.score != "regex":
        raise SpecError(f"{spec.source_path}: options.regex is read only with score = 'regex' (score is {o.score!r})")
    try:
        parse = score_parser(o.score, scale=o.scale, regex=o.regex)
    except ValueError as e:
        raise SpecError(f"{spec.source_path}: options.regex: {e}") from None
    columns = set().union(*(it.fields for it in items)) if items else set()
    judge_template = checked_template(spec, o.judge_prompt, "options.judge_prompt", set(JUDGE_FIELDS) | columns)
    candidate_template = (checked_template(spec, o.candidate_prompt, "options.candidate_prompt",
                                           set(CANDIDATE_FIELDS) | columns) if o.candidate_prompt else None)
    rubric = text_or_file(spec, o.rubric, "rubric")[0] if o.rubric is not None else None
    if "rubric" in judge_template.placeholders and not rubric:
        for it in items:
            if not it.criteria:
                raise DataError(str(spec.data_path()), f"field '{o.columns.criteria}': empty, and the judge prompt "
                                f"{judge_template.path} uses {{rubric}}: give this item criteria or set "
                                "options.rubric (a global rubric)", row=it.row)
    system = text_or_file(spec, o.judge_system, "judge_system") if o.judge_system is not None else None
    labels = (load_human_labels(spec.resolve_path(o.human_labels), kind="rubric",
                                scale=(float(o.scale[0]), float(o.scale[1]))) if o.human_labels else None)
    return Prepared(spec, o, items, judge_template, candidate_template, rubric, system, sources.candidates,
                    sources.live, sources.imported, parse, labels=labels)
