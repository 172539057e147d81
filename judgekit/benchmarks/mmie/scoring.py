"""The scorer's request for one answer, laid out as the authors' scorer lays it out.

The reference (Lillianwei-h/MMIE ``main.py``, ``dataset.py``, ``prompts.py``) sends MMIE-Score one
user turn and no system message of its own (InternVL's ``chat()`` adds the model's): the
category's prompt (``get_prompt``: the criteria, then ``### Question\\n{question}\\n### Answer\\n
{answer}\\n``, for multi-step reasoning ``### Correct Answer\\nThe correct answer to this question
should be: {gt_answer}\\n``, then ``### Feedback\\n``), filled by ``str.format``, with each
``Image-k: <image>`` line's image in ``pixel_values``, in order; greedy decoding, 1,024 new tokens
(the runner's params).  Here the prompt files are those strings (prompts/mmie/score_*.txt), the
fields are filled in one pass (:meth:`~judgekit.resources.Prompt.render`, the same text as
``str.format`` for any value), and each image is attached right after its ``Image-k: <image>``
line (:func:`interleave`), which the local InternVL worker joins back into the same text.

Question and answer are flattened by :func:`~judgekit.parsers.mmie.flatten_as_reference` (the
default) or :func:`~judgekit.parsers.mmie.flatten_for_judge` (``options.keep_full_answer``).
The ground truth is the text of its first entry (:func:`~judgekit.parsers.mmie.gt_reference_text`),
or all its texts (``options.full_ground_truth``).  The injection guards, on by default:
``options.defuse_headers`` (answer text cannot hold ``### Score`` ... headers) and
``options.defuse_image_tags`` (no literal ``<image>`` in question or answer text).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from ...parsers.mmie import (
    Flattened,
    defuse_headers,
    flatten_as_reference,
    flatten_for_judge,
    gt_reference_text,
    gt_text,
)
from ...resources import Prompt, load_prompt
from ...types import ImagePart, Part, TextPart
from .options import Options
from .records import MSR, MMIEItem, Segment

__all__ = ["SCORE_PROMPTS", "ScorerText", "score_prompts", "scorer_text", "interleave", "defuse_answer_text",
           "placeholders_out"]

#: category -> its prompt file (the reference's ``get_prompt``)
SCORE_PROMPTS = {"situational_analysis": "mmie/score_situational_analysis.txt",
                 "project_based_learning": "mmie/score_project_based_learning.txt",
                 "multi_step_reasoning": "mmie/score_multi_step_reasoning.txt"}
_IMAGE_MARK = re.compile(r"Image-(\d+): <image>\n")
_PLACEHOLDER = re.compile(r"<\s*image\s*>", re.IGNORECASE)


def score_prompts() -> dict[str, Prompt]:
    return {c: load_prompt(p) for c, p in SCORE_PROMPTS.items()}


def placeholders_out(text: str) -> str:
    """Text with any literal ``<image>`` written as ``[image]``: in the prompt, ``<image>`` stands
    for an attached image (the InternVL scorer counts them), so a stray one would misplace images."""
    return _PLACEHOLDER.sub("[image]", text)


def defuse_answer_text(text: str, options: Options) -> str:
    """An answer's text with the injection guards in force applied."""
    if options.defuse_headers:
        text = defuse_headers(text)
    if options.defuse_image_tags:
        text = placeholders_out(text)
    return text


@dataclass(frozen=True)
class ScorerText:
    """The scorer's prompt text for one answer, and what went into it."""

    text: str
    flat: Flattened[Segment]
    prompt: Prompt


def scorer_text(item: MMIEItem, answer: Sequence[Segment], options: Options,
                prompts: dict[str, Prompt]) -> ScorerText:
    """The filled prompt for ``answer`` to ``item`` (the module docstring), and the images to
    attach (``flat.images``, in order)."""
    answer = [s if s.is_image or s.text is None else Segment.of_text(defuse_answer_text(s.text, options))
              for s in answer]
    question = list(item.question)
    if options.defuse_image_tags:
        question = [s if s.is_image or not _PLACEHOLDER.search(s.text or "")
                    else Segment.of_text(placeholders_out(s.text or "")) for s in question]
    if options.keep_full_answer:
        flat = flatten_for_judge(question, answer, image_cap=options.image_cap)
    else:
        flat = flatten_as_reference(question, answer)
    answer_text = flat.answer
    if options.defuse_headers:
        # segments were defused one by one; the whole answer once more, for a header split across
        # two text segments (``###`` ending one, ``Score`` starting the next)
        answer_text = defuse_headers(answer_text)
    fields = {"question": flat.question, "answer": answer_text}
    if item.category == MSR:
        fields["gt_answer"] = gt_text(item.gt_answer) if options.full_ground_truth \
            else gt_reference_text(item.gt_lead_text)
    prompt = prompts[item.category]
    return ScorerText(prompt.render(**fields), flat, prompt)


def interleave(text: str, images: list[ImagePart]) -> list[Part]:
    """The prompt with each attached image right after its ``Image-k: <image>`` line."""
    parts: list[Part] = []
    pos = 0
    it = iter(images)
    for m in _IMAGE_MARK.finditer(text):
        img = next(it, None)
        if img is None:
            break
        parts.append(TextPart(text[pos:m.end()]))
        parts.append(img)
        pos = m.end()
    rest = list(it)
    parts.append(TextPart(text[pos:]))
    parts.extend(rest)  # (never: every attached image has its line)
    return [p for p in parts if not (isinstance(p, TextPart) and not p.text)]
