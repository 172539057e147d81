"""``[options]`` of an MMIE spec.

The defaults reproduce the authors' scorer (Lillianwei-h/MMIE: ``main.py``, ``dataset.py``,
``prompts.py``).  Options declared with :func:`~judgekit.benchmarks.deviations.ours` depart from
it; ``summary.json`` lists the ones in force under ``deviations``.
"""

from __future__ import annotations

from typing import Literal

from pydantic import Field, ValidationInfo, field_validator

from ...config import STRICT_CONFIG
from ...judging.uncertainty import IntervalOptions
from ..deviations import ours

__all__ = ["Options"]


class Options(IntervalOptions):
    """``[options]`` of an MMIE spec (and the bootstrap intervals' ``bootstrap_samples``,
    ``bootstrap_seed``, ``interval_level``)."""

    model_config = STRICT_CONFIG  # unknown keys, loose types, inf and nan are spec errors

    images_dir: str | None = Field(None, description="the folder image paths are relative to (default: the data "
                                                     "file's folder)")
    skip_unreadable: bool = Field(False, description="leave out rows whose images do not decode (listed) "
                                                     "instead of stopping with an error")
    answer_mode: Literal["integrated", "text"] = Field(
        "integrated", description="integrated: candidates answer with <image> descriptions drawn by each of "
                                  "roles.generators; text: candidates answer in plain text")
    native_answers: list[str] = Field(default_factory=list, description="scorer-format files of native "
                                                                        "interleaved answers to score too")
    native_images_dir: str | None = Field(None, description="the folder the native answers' image paths are "
                                                            "relative to (default: each file's folder)")
    keep_full_answer: bool = ours(
        False, reference="stops reading an answer once question and answer hold 3 images (the rest of its "
                         "text and images unscored) and leaves out rows with more than 4 images",
        description="score every row and show the scorer every answer text; images up to image_cap "
                    "(None: all), each one left out named in the prompt and counted")
    image_cap: int | None = Field(None, ge=0, description="with keep_full_answer: the most images attached to a "
                                                          "scoring prompt (question's first); None: all")
    full_ground_truth: bool = ours(
        False, reference="gives the multi-step reasoning scorer the text of the ground truth's first entry "
                         "only ('None' when that entry has none)",
        description="give the multi-step reasoning scorer every text of the ground truth, one a line")
    category_from_label: bool = ours(
        False, reference="takes the category from the id: 'SA' in it, else 'PBL', else 'MSR' (the row's "
                         "catagory is not read)",
        description="take the category from the row's category/catagory field, the id's rule only when "
                    "the row has none")
    defuse_headers: bool = ours(
        True, guard=True, reference="passes answer text to the scorer as written",
        description="answer text that repeats a prompt section header (### Score, ### Feedback, ...) gets "
                    "'##' instead of the hash signs, so an answer cannot forge the scorer's sections")
    defuse_image_tags: bool = ours(
        True, guard=True, reference="passes a literal <image> in question or answer text on, where "
                                    "InternVL's chat() takes it for an image's slot",
        description="a literal <image> in question or answer text is written [image], so only the "
                    "Image-k lines hold the attached images' slots")
    seed: int = Field(0, ge=0, description="base seed of the generated images")
    human_scores: str | None = Field(None, description="CSV/JSON of human 0-6 scores (id, score) of one "
                                                       "system's answers, for Table 5's alignment")
    human_scores_system: str | None = Field(None, description="the system the human scores rate (default: "
                                                              "the only system)")

    @field_validator("image_cap")
    @classmethod
    def _cap_needs_full_answer(cls, cap: int | None, info: ValidationInfo) -> int | None:
        if cap is not None and not info.data.get("keep_full_answer"):
            raise ValueError("applies with keep_full_answer = true (by default an answer is read as the "
                             "reference reads it: until question and answer hold 3 images)")
        return cap
