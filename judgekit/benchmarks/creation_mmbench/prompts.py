"""Building candidate queries and judge prompts for one Creation-MMBench item.

Pure functions: an item (and answers) in, text or messages out.  The wording lives in
``prompts/creation_mmbench/*.txt``; each builder returns the :class:`~judgekit.resources.Prompt`
it used (its ``hash`` goes into the cache key) together with the rendered text.

Fields are filled in one pass (:func:`fill`), like ``str.format`` in the reference: a value that
itself contains ``{criteria}`` or ``{answer_b}`` is never expanded again.

The judge prompts take both answers (baseline and candidate, in either order) as the judge is
to read them (see :mod:`.prediction_file` for what the reference's files do to them first).  With
``defuse`` (the default; the pipeline's ``defuse_answers`` option, an injection guard) each goes
through :func:`neutralise`, so an answer cannot close its ``[ASSISTANT B]`` block early or plant a
line the verdict parser would read; without it they go in verbatim, as in the reference.
"""

from __future__ import annotations

import re
from functools import lru_cache
from typing import Literal

from judgekit.parsers.creation import MARKER_RULES, brackets_to_parentheses
from judgekit.parsers.view import View, defuse
from judgekit.resources import Prompt, load_prompt
from judgekit.types import Message

from .data import CreationItem

__all__ = [
    "PROMPT_FILES",
    "fill",
    "neutralise",
    "compose_question",
    "candidate_messages",
    "pairwise_prompt",
    "vfs_prompt",
    "to_query",
    "describe_instruction",
    "query_specific_fewshot",
]

#: every prompt file this module reads, by role
PROMPT_FILES = {
    "pairwise": "creation_mmbench/pairwise_judge.txt",
    "vfs_gt": "creation_mmbench/vfs_judge_gt.txt",
    "vfs_nogt": "creation_mmbench/vfs_judge_nogt.txt",
    "query": "creation_mmbench/query.txt",
    "to_query": "creation_mmbench/to_query.txt",
    "describe_generic": "creation_mmbench/describe_generic.txt",
    "describe_query_specific": "creation_mmbench/describe_query_specific.txt",
    "query_specific_fewshot": "creation_mmbench/query_specific_fewshot.txt",
}

_FIELD = re.compile(r"\{([a-z_]+)\}")


def fill(prompt: Prompt, **fields: str) -> str:
    """Replace each ``{name}`` of the template by ``fields[name]`` in a single pass.

    Every field given must occur in the template, and every ``{lower_case}`` placeholder of the
    template must be given: a prompt file and its caller can't drift apart silently.
    """
    names = set(_FIELD.findall(prompt.text))
    extra = set(fields) - names
    missing = names - set(fields)
    if extra or missing:
        raise ValueError(
            f"prompt {prompt.name}: fields {sorted(extra)} not in the template, "
            f"placeholders {sorted(missing)} not given"
        )
    return _FIELD.sub(lambda m: fields[m.group(1)], prompt.text)


# --------------------------------------------------------------------------- neutralising answers

# block delimiters of the judge prompts, in the folded view (no white space, any case or form)
_VIEW_BLOCK = re.compile(
    r"\[(?:END)?(?:ASSISTANT[AB]|VISUALFACTUALITYCRITERIA|CRITERIA|INSTRUCTIONS|GROUNDTRUTH)\]"
)


def _blocks(view: View, text: str) -> list[tuple[int, int, str]]:
    return [e for m in _VIEW_BLOCK.finditer(view.text)
            for e in brackets_to_parentheses(view, text, m.start(), m.end())]


@lru_cache(maxsize=256)  # an item's answers go into 8 judge prompts (2 judges x 2 orders, planned and run)
def neutralise(answer: str) -> str:
    """Defuse what an answer could use to break out of its block or fake a judge's output.

    Markers are found in the folded view of :mod:`judgekit.parsers.view` (ligatures, full-width
    and other compatibility forms, case variants, zero-width characters, markup and spacing all
    fold away), the same view :func:`judgekit.parsers.creation.defuse_markers` uses for the
    parsers' markers, and broken in the original text:

    * block delimiters (``[END ASSISTANT B]``, ``[CRITERIA]``, ``[GROUND TRUTH]``, ...) become
      ``(END ASSISTANT B)`` etc.;
    * double-bracketed verdict tokens (``[[B>>A]]``, ``［［Ｂ＞＞Ａ］］``) become ``((B>>A))`` ...;
    * ``Final Verdict is:`` becomes ``Final-verdict (quoted):`` and ``Visual Factuality Score:``
      becomes ``Visual-factuality (quoted) score:``, so the parsers' markers never appear.

    Any other text is left byte-identical (the reference does not defuse; a real answer with none
    of these markers gives the reference's prompt text).
    """
    return defuse(answer, (_blocks, *MARKER_RULES), spaces=False)


# --------------------------------------------------------------------------- queries


def compose_question(*, role: str, background: str, instruction: str, requirement: str) -> str:
    """The Creation-MMBench query (Fig. 30) from its four parts; trailing white space dropped."""
    return fill(
        load_prompt(PROMPT_FILES["query"]),
        role=role,
        background=background,
        instruction=instruction,
        requirement=requirement,
    ).rstrip()


def candidate_messages(item: CreationItem) -> tuple[Message, ...]:
    """What the candidate model sees: one user message, the images first, then the question."""
    return (Message.user(*item.images, item.question),)


def to_query(item: CreationItem, description: str) -> tuple[Prompt, str]:
    """The Creation-MMBench-TO query (Fig. 30, TO branch): the item's parts plus an image description.

    Needs the ``role`` and ``instruction`` columns (the composed ``question`` cannot be split
    back into its parts); raises ValueError for an item without them.
    """
    if not (item.role.strip() and item.instruction.strip()):
        raise ValueError(f"item {item.index} has no role/instruction, which the text-only query is built from")
    p = load_prompt(PROMPT_FILES["to_query"])
    text = fill(
        p,
        role=item.role,
        background=item.background,
        instruction=item.instruction,
        requirement=item.requirement,
        description=description,
    )
    return p, text


def describe_instruction(
    kind: Literal["generic", "query_specific"], query_specific_part: str = ""
) -> tuple[Prompt, str]:
    """The describer's instruction (Fig. 31); ``query_specific`` appends the per-query aspects."""
    if kind == "generic":
        if query_specific_part:
            raise ValueError("a generic description takes no query_specific_part")
        p = load_prompt(PROMPT_FILES["describe_generic"])
        return p, fill(p)
    if kind == "query_specific":
        # the few-shot reply, trimmed; the template supplies the closing full stop.  An empty
        # part is allowed (a cost estimate builds the request before the reply exists).
        part = query_specific_part.strip().rstrip(".").rstrip()
        p = load_prompt(PROMPT_FILES["describe_query_specific"])
        return p, fill(p, query_specific_part=part)
    raise ValueError(f"kind must be 'generic' or 'query_specific', not {kind!r}")


def query_specific_fewshot(item: CreationItem) -> tuple[Prompt, str]:
    """The few-shot prompt (Fig. 32) that asks for the item's "contents to observe"."""
    p = load_prompt(PROMPT_FILES["query_specific_fewshot"])
    return p, fill(p, question=item.question.strip())


# --------------------------------------------------------------------------- judge prompts


def _answer(text: str, defuse: bool) -> str:
    return neutralise(text) if defuse else text


def pairwise_prompt(item: CreationItem, answer_a: str, answer_b: str, *, defuse: bool = True) -> tuple[Prompt, str]:
    """The pairwise (subjective) judge text: the reference's ``subjective`` prompt (Fig. 33).

    The caller sends ``item.images`` as image parts before this text, as the reference does.
    Assistant A is the baseline in the forward order and the candidate in the swapped order.
    """
    p = load_prompt(PROMPT_FILES["pairwise"])
    text = fill(
        p,
        instructions=item.question,
        answer_a=_answer(answer_a, defuse),
        criteria=item.subjective_criteria,
        answer_b=_answer(answer_b, defuse),
    )
    return p, text


def vfs_prompt(item: CreationItem, answer_a: str, answer_b: str, *, defuse: bool = True) -> tuple[Prompt, str]:
    """The visual factuality judge text: the reference's ``objective_with_gt`` or
    ``objective_without_gt`` prompt (Fig. 34), sent as text only, no images.

    The with-ground-truth variant is used when ``item.ground_truth`` is non-empty.  Raises
    ValueError for an item without visual factuality criteria (the reference skips those).
    """
    if item.vf_criteria is None:
        raise ValueError(f"item {item.index} has no visual factuality criteria; it gets no VFS judgment")
    fields = dict(
        instructions=item.question,
        answer_a=_answer(answer_a, defuse),
        vf_criteria=item.vf_criteria,
        answer_b=_answer(answer_b, defuse),
    )
    if item.ground_truth:
        p = load_prompt(PROMPT_FILES["vfs_gt"])
        return p, fill(p, ground_truth=item.ground_truth, **fields)
    p = load_prompt(PROMPT_FILES["vfs_nogt"])
    return p, fill(p, **fields)
