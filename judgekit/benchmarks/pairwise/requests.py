"""The generic pairwise benchmark's requests: a live candidate's and a live baseline's answer,
every judge's verdict in each order (the same prompt for every judge of a panel, each with its
own model settings), and the re-ask after a judge reply that does not parse.

The judge prompt is the user's template (:mod:`judgekit.judging.template`): order 0
puts the baseline's answer in ``{answer_a}`` and the candidate's in ``{answer_b}``; order 1 swaps
them, each answer defused first (:mod:`judgekit.parsers.generic_defuse`,
``defuse_answers``).  The template's hash (and
the system prompt's) is the request's ``prompt_hash``, so an edited prompt file is a new cache entry."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ...judging.items import GenericItem
from ...judging.repeats import repeated
from ...parsers.generic_defuse import defuse_answer
from ...resources import load_prompt
from ...types import ChatRequest, GenParams, Message, TextPart

if TYPE_CHECKING:
    from .prepare import Prepared

__all__ = ["Builder", "item_values", "reask_request"]


def _params(spec, alias: str) -> GenParams:
    return spec.models[alias].params.gen_params()


def item_values(item: GenericItem) -> dict[str, str]:
    """The placeholders every prompt of an item can fill: its columns, then the named fields
    (which win over a column of the same name)."""
    return {**item.fields, "question": item.question, "reference": item.reference or "",
            "criteria": item.criteria or "", "category": item.category or "", "id": item.id}


class Builder:
    """The requests of a prepared run (its spec, options and templates)."""

    def __init__(self, prep: Prepared) -> None:
        self.prep = prep
        self.spec = prep.spec
        self.judges = prep.spec.roles.panel

    # -- answers ---------------------------------------------------------------------------------
    def answer_request(self, alias: str, item: GenericItem, stage: str) -> ChatRequest:
        """A live candidate's (or the live baseline's, ``stage`` "baseline") request: the
        candidate prompt when the spec names one, else the item's images then its question."""
        t = self.prep.candidate_template
        if t is None:
            msg, h = Message.user(*item.images, item.question), ""
        else:
            msg, h = t.render(item_values(item), item.images), t.hash
        return ChatRequest(alias, (msg,), _params(self.spec, alias), stage=stage, item_id=item.id, prompt_hash=h)

    # -- judgments -------------------------------------------------------------------------------
    def orders(self) -> tuple[int, ...]:
        return (0, 1) if self.prep.options.both_orders else (0,)

    def _messages(self, item: GenericItem, answer: str, baseline: str) -> list[tuple[int, tuple[Message, ...], str]]:
        """(order, messages, prompt hash) of the item's judgments, the same for every judge."""
        p = self.prep
        out = []
        if p.options.defuse_answers:
            answer, baseline = defuse_answer(answer), defuse_answer(baseline)
        for order in self.orders():
            a, b = (baseline, answer) if order == 0 else (answer, baseline)
            values = {**item_values(item), "answer_a": a, "answer_b": b}
            msgs: tuple[Message, ...] = (p.judge_template.render(values, item.images),)
            h = p.judge_template.hash
            if p.system_template is not None:
                msgs = (Message.system(p.system_template.render(values, []).text()), *msgs)
                h = f"{p.system_template.hash}+{h}"
            out.append((order, msgs, h))
        return out

    def panel_requests(self, item: GenericItem, answer: str, baseline: str) -> dict[str, list[tuple[int, ChatRequest]]]:
        """Every judge's (order, request) for a candidate's ``answer`` against the ``baseline``'s:
        order 0 = baseline as Assistant A, candidate as B; order 1 swapped.  Each judgment is asked
        ``judge_repeats`` times (repeat r is the request's ``sample_index``:
        :func:`judgekit.judging.repeats.repeated`)."""
        messages = self._messages(item, answer, baseline)
        k = self.prep.options.judge_repeats
        return {judge: [(order, req) for order, msgs, h in messages
                        for req in repeated(ChatRequest(judge, msgs, _params(self.spec, judge), stage="judge",
                                                        item_id=item.id, prompt_hash=h), k)]
                for judge in self.judges}


def reask_request(req: ChatRequest, reply: str) -> ChatRequest:
    """The re-ask after judge reply ``reply`` to ``req`` did not parse: the conversation goes on
    with the judge's own reply, then a request for the verdict line in the prompt's format
    (asking the same thing again would get the same reply from a temperature-0 judge)."""
    follow = load_prompt("pairwise/reask.txt")
    messages = (*req.messages, Message("assistant", (TextPart(reply),)), Message.user(follow.text))
    return ChatRequest(req.model, messages, req.params, stage=req.stage, item_id=req.item_id,
                       sample_index=req.sample_index, prompt_hash=f"{req.prompt_hash}+{follow.hash}",
                       attempt_tag="reask1")
