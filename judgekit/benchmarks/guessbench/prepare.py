"""GuessBench's ``[options]`` and what a run prepares before any call: the build sets (and the
one-shot example), the earlier benchmarks' accuracies when given, the flows (candidate x approach x
task), and that the extractors are chat models."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from pydantic import Field, model_validator

from ...config import STRICT_CONFIG
from ...errors import DataError, SpecError
from ...judging.roles import is_chat_model
from ...judging.uncertainty import IntervalOptions
from ...metrics.guessbench import read_earlier_accuracies
from ..base import require_candidates
from ..deviations import ours
from .data import GuessSet, load_set, load_sets

__all__ = ["Approach", "Options", "Prepared", "prepare"]


Approach = Literal["cot", "no_cot", "one_shot", "self_consistency", "self_refine", "image_retrieval",
                   "image_only", "hint_only"]


class Options(IntervalOptions):
    """``[options]`` of a GuessBench spec.

    Every default is what the authors' evaluation code does; an option declared with
    :func:`~judgekit.benchmarks.deviations.ours` departs from it when set (listed in
    ``summary.json`` under ``deviations``).  The bootstrap options (``bootstrap_samples``,
    ``bootstrap_seed``, ``interval_level``) add intervals and change no accuracy."""

    model_config = STRICT_CONFIG  # unknown keys, loose types, inf and nan are spec errors

    tasks: list[Literal["static", "dynamic"]] = Field(default_factory=lambda: ["static", "dynamic"], min_length=1)
    approaches: list[Approach] = Field(default_factory=lambda: ["cot"], min_length=1,
                                       description="cot (default, with chain of thought), no_cot, one_shot, "
                                                   "self_consistency, self_refine, image_retrieval, image_only, "
                                                   "hint_only")
    match: Literal["reply", "answer"] = ours(
        "reply", reference="looks for the gold answer in the whole lower-cased extractor reply",
        description="answer: only in the guess after the extractor's last 'Answer:' (markers that only quote the "
                    "guesser's response set aside)")
    vote: Literal["reply", "answer"] = ours(
        "reply", reference="self-consistency votes on the whole lower-cased extractor replies",
        description="answer: vote on the extracted guesses (white space collapsed; no guess is no vote)")
    previous_guess: Literal["reply", "answer"] = ours(
        "reply", reference="inserts the previous turn's whole lower-cased extractor reply ('answer: cat')",
        description="answer: insert the extracted guess ('cat'; 'No Answering' when there is none)")
    sc_samples: int = ours(3, reference="3 self-consistency samples", ge=2,
                           description="self-consistency samples per turn")
    sc_temperature: float | None = ours(None, reference="sends no temperature with the samples (provider default)",
                                        ge=0, le=2, description="self-consistency sampling temperature")
    sc_seed: bool = ours(False, reference="sends no seed with the samples",
                         description="send the model's seed (or 0) + i with sample i, so samples are reproducible "
                                     "(and differ on a server whose reply is a function of the request)")
    sc_tie_break: Literal["first", "last"] = ours(
        "first", reference="a vote tie goes to the reply seen first (max over a Counter)",
        description="last: to the one seen last (the paper's text)")
    refine_rounds: int = ours(3, reference="3 review rounds (the paper says 2)", ge=1,
                              description="self-refine / image-retrieval review rounds after the guess")
    stop_signal: Literal["exact", "lenient"] = ours(
        "exact", reference="stops on a reply containing '$Well done!$' exactly, unless it quotes the prompt's sentence",
        description="lenient: also any case, and a reply that is only 'Well done!' (with or without $, ** or quotes)")
    retrieval_source: str = ours("Google Images", reference="the retrieval prompt says 'from Google Images'",
                                 description="where the retrieval prompt says the image comes from")
    drop_bom: bool = ours(False, reference="reads Answer.txt and the hint files with open().read(): a UTF-8 "
                                           "byte-order mark stays (U+FEFF in the hint's prompt and in the gold)",
                          description="drop a byte-order mark at the start of Answer.txt and the hint files")
    strip_answer: bool = ours(False, reference="matches Answer.txt as read: white space around the answer (a final "
                                               "line break) stays, so no reply matches; the one-shot example's "
                                               "answer is put in its prompt as read",
                              description="strip white space around the answer (the sets' and the one-shot "
                                          "example's)")
    one_shot_example: str = Field("samples:guessbench/example", description="a build-set folder (real layout) "
                                                                            "used as the worked example")
    earlier_benchmarks: str | None = Field(None, description="CSV model,<bench>,... of the candidates' accuracies "
                                                             "on earlier benchmarks, for AutoBencher novelty")
    autobencher_approach: str = Field("cot", description="the approach whose accuracies feed AutoBencher")

    @model_validator(mode="after")
    def _unique(self) -> "Options":
        for name in ("tasks", "approaches"):
            v = getattr(self, name)
            if len(set(v)) != len(v):
                raise ValueError(f"{name} lists an entry twice")
        return self


@dataclass
class Prepared:
    spec: Any
    options: Options
    sets: list[GuessSet]
    example: GuessSet | None = None
    earlier_csv: Path | None = None
    flows: list[tuple[str, str, str]] = field(default_factory=list)  # (alias, approach, task)


def prepare(spec, options: Options, limit: int | None = None) -> Prepared:
    require_candidates(spec)
    if spec.data.startswith("hf:"):
        raise SpecError(f"{spec.source_path}: data = {spec.data!r}: GuessBench's build sets are not on the Hugging "
                        f"Face hub; the authors release them in their GitHub repository (Zivenzhu/GuessBench): "
                        f"clone it and point data at its data folder")
    root = spec.data_path()
    read = {"drop_bom": options.drop_bom, "strip_answer": options.strip_answer}
    sets = load_sets(root, limit=limit, **read)
    example = None
    if "one_shot" in options.approaches:
        ex_path = spec.resolve_path(options.one_shot_example)
        example = load_set(ex_path, **read)
        if any(s.folder.resolve() == ex_path.resolve() for s in sets):
            raise DataError(str(ex_path), "the one-shot example is one of the evaluated sets; use another set")
    if not spec.roles.judge:
        raise SpecError(f"{spec.source_path}: GuessBench needs roles.judge (the model that extracts each guess)")
    _check_extractors(spec)
    if "image_retrieval" in options.approaches and not spec.roles.retriever:
        raise SpecError(f"{spec.source_path}: the image_retrieval approach needs roles.retriever "
                        "(a model alias with provider brave, sim_image_search or image_folder)")
    earlier = None
    if options.earlier_benchmarks:
        earlier = spec.resolve_path(options.earlier_benchmarks)
        if not earlier.exists():
            raise DataError(str(earlier), "no such file (options.earlier_benchmarks)")
        # read now, so a bad file stops the run before any call rather than after all of them
        read_earlier_accuracies(earlier, list(spec.roles.candidates))
    flows = [(alias, approach, task) for alias in spec.roles.candidates for approach in options.approaches
             for task in options.tasks]
    return Prepared(spec, options, sets, example, earlier, flows)


def _check_extractors(spec) -> None:
    """Every extractor must be a chat model (not an image retriever or generator, nor a local
    model run for another task)."""
    role = "roles.judges" if spec.roles.judges else "roles.judge"
    for alias in spec.roles.panel:
        m = spec.models[alias]
        if is_chat_model(m):
            continue
        what = f"local task {m.local.task!r}" if m.provider == "local" else f"provider {m.provider!r}"
        raise SpecError(f"{spec.source_path}: {role}: '{alias}' cannot extract answers ({what}); an extractor "
                        f"is a chat model")
