"""Creation-MMBench's requests: the describer's, the candidates' and every judge's (the same
judge prompts for each judge of a panel, each with its own model settings), and the re-ask after
a judge reply that does not parse."""

from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING

from ...judging.repeats import repeated
from ...resources import load_prompt
from ...types import ChatRequest, GenParams, Message, TextPart
from . import prompts as P
from .data import CreationItem
from .prediction_file import NAN_TEXT, as_judged

if TYPE_CHECKING:
    from .prepare import Prepared

__all__: list[str] = []  # the pipeline's own: _Builder, _reask_request


def _params(spec, alias: str) -> GenParams:
    return spec.models[alias].params.gen_params()


# -- request builders ----------------------------------------------------------------------------
class _Builder:
    """The requests of a prepared run (its spec and options)."""

    def __init__(self, prep: Prepared) -> None:
        self.prep = prep
        self.spec = prep.spec
        self.judge = prep.spec.roles.judge
        self.judges = prep.spec.roles.panel

    def describe_requests(self, item: CreationItem, fewshot_answer: str | None) -> list[ChatRequest]:
        """TO variant: [fewshot request (query-specific only)] or the describe request."""
        o, spec = self.prep.options, self.spec
        if o.description == "query_specific" and fewshot_answer is None:
            prompt, text = P.query_specific_fewshot(item)
            return [ChatRequest(self.judge, (Message.user(text),), _params(spec, self.judge), stage="describe",
                                item_id=item.index, prompt_hash=prompt.hash, attempt_tag="fewshot")]
        prompt, text = P.describe_instruction(o.description, fewshot_answer or "")
        msg = Message.user(*item.images, text)
        return [ChatRequest(spec.roles.describer, (msg,), _params(spec, spec.roles.describer), stage="describe",
                            item_id=item.index, prompt_hash=prompt.hash)]

    def candidate_request(self, alias: str, item: CreationItem, description: str | None) -> ChatRequest:
        if self.prep.options.text_only:
            prompt, text = P.to_query(item, description or "")
            return ChatRequest(alias, (Message.user(text),), _params(self.spec, alias), stage="candidate",
                               item_id=item.index, prompt_hash=prompt.hash)
        return ChatRequest(alias, P.candidate_messages(item), _params(self.spec, alias), stage="candidate",
                           item_id=item.index)

    def orders(self) -> tuple[int, ...]:
        return (0, 1) if self.prep.options.dual else (0,)

    def _judged(self, item: CreationItem, answer: str, order: int) -> tuple[str, str]:
        """(candidate, baseline) answers as the judge reads them in ``order``."""
        cand, base = answer, item.reference_answer
        if not self.prep.options.keep_all_answer_text:  # as the reference's .xlsx files return them
            cand, base = as_judged(cand, order), as_judged(base, order)
        return cand, base

    def _as_read(self, item: CreationItem, order: int) -> CreationItem:
        """The item's question and ground truth as the reference's judge reads them in ``order``:
        like the answers, they come back from its ``.xlsx`` prediction file (one trip, two for the
        swapped order); a ground truth that reads back as NaN is none (``pd.isna``)."""
        if self.prep.options.keep_all_answer_text:
            return item
        question = as_judged(item.question, order)
        gt = as_judged(item.ground_truth, order) if item.ground_truth else ""
        gt = "" if gt == NAN_TEXT else gt
        if question == item.question and gt == item.ground_truth:
            return item
        return dataclasses.replace(item, question=question, ground_truth=gt)

    def length_diff(self, item: CreationItem, answer: str, order: int) -> int:
        """The candidate's answer length minus the baseline's, in characters, as the judge saw them
        in ``order`` (the judge-behaviour figures' length difference)."""
        cand, base = self._judged(item, answer, order)
        defuse = self.prep.options.defuse_answers
        return len(P._answer(cand, defuse)) - len(P._answer(base, defuse))

    def _judge_messages(self, item: CreationItem, answer: str) -> list[tuple[str, int, Message, str]]:
        """(kind, order, message, prompt hash) of the item's judgments, the same for every judge."""
        o = self.prep.options
        out = []
        original = item
        for order in self.orders():
            cand, base = self._judged(item, answer, order)
            a, b = (base, cand) if order == 0 else (cand, base)
            item = self._as_read(original, order)
            if o.pairwise:
                prompt, text = P.pairwise_prompt(item, a, b, defuse=o.defuse_answers)
                out.append(("pairwise", order, Message.user(*item.images, text), prompt.hash))
            if o.vfs and item.vf_criteria is not None:  # even empty criteria, as the reference
                prompt, text = P.vfs_prompt(item, a, b, defuse=o.defuse_answers)
                out.append(("vfs", order, Message.user(text), prompt.hash))
        return out

    def _requests(self, judge: str, messages) -> list[tuple[str, int, ChatRequest]]:
        """(kind, order, request) of each judgment, each asked ``judge_repeats`` times (repeat r is
        the request's ``sample_index``; :func:`judgekit.judging.repeats.repeated`)."""
        jp, k = _params(self.spec, judge), self.prep.options.judge_repeats
        return [(kind, order, req)
                for kind, order, msg, h, item_id in messages
                for req in repeated(ChatRequest(judge, (msg,), jp, stage=kind, item_id=item_id, prompt_hash=h), k)]

    def judge_requests(self, item: CreationItem, answer: str,
                       judge: str | None = None) -> list[tuple[str, int, ChatRequest]]:
        """(kind, order, request) of one judge (the first by default): order 0 = baseline as A,
        candidate as B; order 1 swapped."""
        messages = [(*m, item.index) for m in self._judge_messages(item, answer)]
        return self._requests(judge or self.judge, messages)

    def panel_requests(self, item: CreationItem, answer: str) -> dict[str, list[tuple[str, int, ChatRequest]]]:
        """:meth:`judge_requests` of every judge of the panel, the prompts built once."""
        messages = [(*m, item.index) for m in self._judge_messages(item, answer)]
        return {judge: self._requests(judge, messages) for judge in self.judges}


def _reask_request(kind: str, req: ChatRequest, reply: str) -> ChatRequest:
    """The re-ask after judge reply ``reply`` to ``req`` did not parse: the conversation goes on
    with the judge's own reply, then a request for the final line (asking the same thing again
    would get the same reply from a temperature-0 judge)."""
    follow = load_prompt(f"creation_mmbench/reask_{kind}.txt")
    messages = (*req.messages, Message("assistant", (TextPart(reply),)), Message.user(follow.text))
    return ChatRequest(req.model, messages, req.params, stage=req.stage, item_id=req.item_id,
                       sample_index=req.sample_index, prompt_hash=f"{req.prompt_hash}+{follow.hash}",
                       attempt_tag="reask1")
