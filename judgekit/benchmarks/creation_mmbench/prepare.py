"""Creation-MMBench's ``[options]`` and what a run prepares before any call: the items (the
released TSV or parquet, or the hub), the human ratings when given (Table 4 and Table 7), and that
a judge is named and every judge is a chat model (:func:`check_judges`)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

from ...config import STRICT_CONFIG
from ...hub import is_hub
from ...judging.human_agreement import HumanLabelOptions, HumanLabels, labels_from_ratings, load_human_labels
from ...judging.roles import check_chat_models
from ...judging.ensemble import EnsembleOptions
from ...judging.repeats import RepeatOptions
from ...judging.uncertainty import IntervalOptions
from ..base import require_candidates
from ..deviations import ours
from .data import CreationItem, load_data, read_human_rating_table

__all__ = ["Options", "Prepared", "prepare", "check_judges"]


class Options(IntervalOptions, EnsembleOptions, RepeatOptions, HumanLabelOptions):
    """``[options]`` of a Creation-MMBench spec.  Defaults reproduce the authors' code; the
    bootstrap intervals (:class:`~judgekit.judging.uncertainty.IntervalOptions`) are an
    addition that leaves every point estimate as it is."""

    model_config = STRICT_CONFIG  # unknown keys, loose types, inf and nan are spec errors

    pairwise: bool = ours(True, reference="always makes the pairwise judgments",
                          description="false: no pairwise judgments (no Reward, no Win Rate)")
    vfs: bool = ours(True, reference="always makes the VFS judgments",
                     description="false: no visual factuality judgments (no VFS)")
    dual: bool = ours(True, reference="dual evaluation: both orders, pooled",
                      description="false: the baseline as Assistant A only (half the judge calls)")
    reask_on_parse_failure: bool = ours(
        False, reference="never re-asks: an unreadable judge reply is a counted failure",
        description="an unreadable judge reply is followed by one request for the final line "
                    "(judgekit's reask_pairwise.txt / reask_vfs.txt)")
    keep_all_answer_text: bool = ours(
        False, reference="the judge reads answers (and the question and ground truth) back from an .xlsx file: "
                         "cut at 32,767 characters, an empty or NA-spelled answer as 'nan', one starting with '=' "
                         "as '0', control characters as _x000D_-style escapes",
        description="the judge reads both answers, the question and the ground truth exactly as written")
    failed_answer_counts_as_failure: bool = ours(
        False, reference="a candidate call that failed is judged with the answer "
                         "'Failed to obtain answer via API.'",
        description="a candidate call that failed makes each of the item's judgments a counted "
                    "failure, with no judge call")
    defuse_answers: bool = ours(
        True, guard=True, reference="puts both answers into the judge prompts verbatim",
        description="block delimiters, verdict tokens and score markers inside an answer are broken "
                    "before it enters a judge prompt, so it cannot forge the judge's output")
    keep_na_text: bool = ours(
        False, reference="reads the TSV with pandas: a question, baseline answer or ground_truth spelled like a "
                         "missing value (NA, N/A, NULL, None, nan, ...) is NaN: the prompt says 'nan', and such a "
                         "ground_truth is none",
        description="such a cell keeps its text (a ground_truth 'NA' is a ground truth)")
    blank_ground_truth_as_missing: bool = ours(
        False, reference="a ground_truth of white space only is a ground truth (pandas keeps it): the "
                         "with-ground-truth VFS prompt",
        description="a ground_truth of white space only is none: the VFS prompt without one")
    text_only: bool = ours(False, reference="has no text-only variant (Creation-MMBench-TO is in the paper only)",
                           description="Creation-MMBench-TO: a describer's description replaces the images")
    description: Literal["generic", "query_specific"] = "generic"  # the TO variant's describer instruction
    human_ratings: str | None = None  # CSV of human pairwise ratings: MAE / Consistency per judge (Table 4)
    judge_repeats: int = ours(1, reference="asks each judgment once", ge=1, le=100,
                              description="every judgment asked this many times (each its own cache entry); the "
                                          "figures pool the repeats and show the SD and range between them")
    task_categories: dict[str, str] = ours(
        {}, reference="its fixed task -> category table",
        description="tasks moved to other categories (or categories for tasks the table lacks)")


@dataclass
class Prepared:
    spec: Any
    options: Options
    items: list[CreationItem]
    unknown_tasks: set[str] = field(default_factory=set)
    human: dict | None = None
    warnings: list[str] = field(default_factory=list)  # the loader's (rows left out, ...)
    raters: dict | None = None  # (model, index) -> {rater: rating}: Table 7's human-human rows
    #: the human labels of the agreement figures (kappa, Spearman, Kendall, MAE, consistency with
    #: intervals): options.human_labels, else the human_ratings file's ratings
    labels: HumanLabels | None = None


def _pandas_read(options: Options) -> dict[str, bool]:
    """The loader's departures from how the reference's pandas reads the text cells."""
    return {"na_text": options.keep_na_text, "blank_ground_truth": options.blank_ground_truth_as_missing}


def prepare(spec, options: Options, limit: int | None = None) -> Prepared:
    require_candidates(spec)
    if is_hub(spec.data):  # data = "hf:opencompass/Creation-MMBench" (judgekit.hub)
        from .hub import load_hub

        data = load_hub(spec, task_categories=options.task_categories or None, **_pandas_read(options))
    else:
        path = spec.data_path()
        if not path.exists():
            from ...errors import DataError

            raise DataError(str(path), "no such file (the released Creation-MMBench TSV or parquet; point the "
                                       "spec's `data` at it or pass --set data=PATH)")
        data = load_data(path, task_categories=options.task_categories or None, **_pandas_read(options))
    items = data.items[:limit] if limit else data.items
    human = raters = None
    if options.human_ratings:  # relative to the spec file, or a shipped sample (samples:...)
        raters = read_human_rating_table(spec.resolve_path(options.human_ratings))
        human = {k: sum(v.values()) / len(v) for k, v in raters.items() if v}  # P: read_human_ratings
    labels = None
    if options.human_labels:
        labels = load_human_labels(spec.resolve_path(options.human_labels), kind="pairwise")
    elif raters:
        labels = labels_from_ratings(str(spec.resolve_path(options.human_ratings)), raters)
    if options.text_only and not spec.roles.describer:
        from ...errors import SpecError

        raise SpecError("options.text_only needs roles.describer (the model that describes the images)")
    if options.pairwise or options.vfs:
        check_judges(spec)
    return Prepared(spec, options, items, set(data.unknown_tasks), human, list(data.warnings), raters, labels)


def check_judges(spec) -> None:
    """A judge is named, and every judge of the panel is a chat model (SpecError naming the role)."""
    from ...errors import SpecError

    role = "roles.judges" if spec.roles.judges else "roles.judge"
    if not spec.roles.panel:
        raise SpecError(f"{spec.source_path}: Creation-MMBench needs roles.judge (or a panel in roles.judges): "
                        f"the model that makes the pairwise and VFS judgments")
    check_chat_models(spec, role, spec.roles.panel)
