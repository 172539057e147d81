"""The rubric benchmark's requests: a candidate's answer to an item, a judge's grading of an answer
(the user's prompt file with the item's fields, the answer and the rubric filled in, the item's
images where the prompt puts them), and the re-ask after a reply whose score does not parse.

An answer enters the judge prompt defused (``defuse_answers``, on by default): whatever in it
could be read as the judge's own output (a ``[[7]]``, a ``Rating:`` line) or could close the
answer's block early (``[The End of Assistant's Answer]``) is broken by
:func:`judgekit.parsers.generic_defuse.defuse_answer`, the pairwise benchmark's too.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ...judging.items import GenericItem
from ...judging.template import Template
from ...parsers.generic_defuse import defuse_answer
from ...resources import load_prompt
from ...types import ChatRequest, GenParams, Message, TextPart

if TYPE_CHECKING:
    from .prepare import Prepared

__all__ = ["Builder", "reask_request"]

#: the re-ask after a judge reply whose score does not parse
REASK_PROMPT = "rubric/reask_score.txt"


# -- request builders ------------------------------------------------------------------------------
def _params(spec, alias: str) -> GenParams:
    return spec.models[alias].params.gen_params()


class Builder:
    """The requests of a prepared run."""

    def __init__(self, prep: Prepared) -> None:
        self.prep = prep
        self.spec = prep.spec
        self.judge_template: Template = prep.judge_template
        self.candidate_template: Template | None = prep.candidate_template

    def rubric(self, item: GenericItem) -> str:
        """The item's rubric: its criteria column when set, else the global ``options.rubric``."""
        return item.criteria if item.criteria else (self.prep.rubric or "")

    def candidate_request(self, alias: str, item: GenericItem) -> ChatRequest:
        t = self.candidate_template
        if t is None:  # the question, the images before it (as Creation-MMBench)
            msg = Message.user(*item.images, item.question)
            return ChatRequest(alias, (msg,), _params(self.spec, alias), stage="candidate", item_id=item.id)
        msg = t.render({**item.fields, "question": item.question}, item.images)
        return ChatRequest(alias, (msg,), _params(self.spec, alias), stage="candidate", item_id=item.id,
                           prompt_hash=t.hash)

    def judge_values(self, item: GenericItem, answer: str) -> dict[str, str]:
        o = self.prep.options
        return {**item.fields, "question": item.question,
                "answer": defuse_answer(answer) if o.defuse_answers else answer,
                "reference": item.reference or "", "criteria": item.criteria or "", "rubric": self.rubric(item),
                "category": item.category or "", "id": item.id}

    def judge_request(self, judge: str, item: GenericItem, answer: str) -> ChatRequest:
        t = self.judge_template
        messages: tuple[Message, ...] = (t.render(self.judge_values(item, answer), item.images),)
        h = t.hash
        if self.prep.judge_system is not None:
            system, system_hash = self.prep.judge_system
            messages = (Message.system(system), *messages)
            h = f"{h}+{system_hash}"
        return ChatRequest(judge, messages, _params(self.spec, judge), stage="judge", item_id=item.id, prompt_hash=h)


def reask_request(req: ChatRequest, reply: str) -> ChatRequest:
    """The re-ask after judge reply ``reply`` to ``req`` did not parse: the conversation goes on
    with the judge's own reply, then a request for the score line alone."""
    follow = load_prompt(REASK_PROMPT)
    messages = (*req.messages, Message("assistant", (TextPart(reply),)), Message.user(follow.text))
    return ChatRequest(req.model, messages, req.params, stage=req.stage, item_id=req.item_id,
                       sample_index=req.sample_index, prompt_hash=f"{req.prompt_hash}+{follow.hash}",
                       attempt_tag="reask1")
