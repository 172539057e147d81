"""Every GuessBench request, text for text, against the authors' code (Zivenzhu/GuessBench,
``evaluation code/evaluation.py``, ``evaluate_gpt.py``, ``invisible_utils.py``).

The expected strings are written out here from the code's string literals (as Python evaluates
them: the no-CoT and hint-only instructions keep the 18 spaces of the source's indentation on
their blank line; the system prompt's dash is U+2014), then assembled as the code assembles them:
``f"{instruction}\\n\\nHint: {hint}\\n"``, ``f"Your previous guess is: {extracted_answer}.
{revision_prompt}"``, the one-shot example after ``Your Task:\\n``, the review prompts."""

from __future__ import annotations

import pytest

from judgekit.benchmarks.guessbench.data import load_set, load_sets
from judgekit.benchmarks.guessbench.flow import FlowConfig, run_set
from judgekit.engine import CallResult
from judgekit.resources import samples_dir
from judgekit.retrieval.base import Retrieved
from judgekit.types import ChatResponse, GenParams, ImagePart, TextPart

ROOT = samples_dir() / "guessbench"
GS = next(s for s in load_sets(ROOT) if s.answer == "rocking chair")
EXAMPLE = load_set(ROOT / "example")

SYSTEM = (
    'You are an AI designed to play the "Guess the Build" game from the Hypixel server in Minecraft. Your task is '
    "to analyze a player's build and accurately guess what it represents. The build is constructed using Minecraft "
    "blocks, and it can depict objects, animals, structures, abstract concepts, or any other recognizable entity.\n"
    "\n"
    "Consider common themes, contextual clues, and typical constructions in Minecraft. If a build is unclear, make "
    "educated guesses based on possible interpretations. Your goal is to guess as accurately and efficiently as "
    "possible.\n"
    "\n"
    "Avoid overly broad answers\u2014be specific when possible. If multiple plausible answers exist, prioritize the "
    "most likely one based on common builds in the game."
)
_LOOK = ("Look at the provided image of a Minecraft build and the corresponding hint. Based on its structure, shape, "
         "materials, and the given hint, determine what it represents. Consider common objects, animals, buildings, "
         "abstract concepts, or any other recognizable entities typically built in Minecraft.")
_BLANK18 = "\n" + " " * 18 + "\n"
ASK = {
    "cot": _LOOK + "\n\nYou can use chain of thought reasoning to arrive at the best possible guess.",
    "no_cot": _LOOK + _BLANK18 + "You are not allowed to use chain-of-thought reasoning. You must output the final "
                                 "answer directly.",
    "image_only": ("Look at the provided image of a Minecraft build. Based on its structure, shape, materials, "
                   "determine what it represents. Consider common objects, animals, buildings, abstract concepts, or "
                   "any other recognizable entities typically built in Minecraft.\n\nYou can use chain of thought "
                   "reasoning to arrive at the best possible guess."),
    "hint_only": ("Look at the provided hint and determine what it represents. Based only on the hint, guess the most "
                  "likely answer. Consider common objects, animals, buildings, abstract concepts, or any other "
                  "recognizable entities." + _BLANK18 + "You can use chain of thought reasoning to arrive at the "
                  "best possible guess."),
}
_INCORRECT = "This guess is incorrect. Now, you will be provided with a more complete version of the "
REVISE = {
    "cot": _INCORRECT + "build along with additional hints. Analyze the new information carefully and make a revised "
                        "guess based on the updated build and hints.\n\nYou can use chain of thought reasoning to "
                        "improve your guess.",
    "no_cot": _INCORRECT + "build along with additional hints. Analyze the new information carefully and make a "
                           "revised guess based on the updated build and hints.\n\nYou are not allowed to use "
                           "chain-of-thought reasoning. You must output the final answer directly.",
    "image_only": _INCORRECT + "build. Analyze the new information carefully and make a revised guess based on the "
                               "updated build.\n\nYou can use chain of thought reasoning to improve your guess.",
    "hint_only": _INCORRECT + "hint. Analyze the new information carefully and make a revised guess based on the "
                              "updated hint.\n\nYou can use chain of thought reasoning to improve your guess.",
}
EXTRACT = ("I will give you a language model's response in a 'Guess the Build' game. Identify and extract the model's "
           "guessed answer. Output it in the format: 'Answer: [extracted answer]'. If no answer is given in the "
           "response, output 'No Answering'.")


def with_hint(text: str, hint: str) -> str:
    return f"{text}\n\nHint: {hint}\n"


class Script:
    """The guesser says ``GUESS=Tree``, the judge ``Answer: Tree``; reviews come from ``reviews``."""

    inexact = False

    def __init__(self, reviews=()):
        self.reviews = iter(reviews)
        self.counts, self.requests = {}, []

    async def call(self, req):
        self.counts[req.stage] = self.counts.get(req.stage, 0) + 1
        self.requests.append(req)
        if req.stage.endswith("/retrieve"):
            out = Retrieved(status="ok", query=req.messages[-1].text(), sha256=EXAMPLE.images[0].sha256,
                            mime="image/png", url=None, page_url=None, title=None, source="x", error=None).to_json()
        elif req.stage.endswith("/extract"):
            out = "Answer: Tree"
        elif req.messages[-1].role == "user" and len(req.messages) % 2:  # a review round
            out = next(self.reviews)
        else:
            out = "GUESS=Tree"
        return CallResult(req, ChatResponse(out))

    def image(self, retrieved):
        return EXAMPLE.images[0]

    def decide(self, kind, stopped):
        pass

    def loop_done(self):
        pass


async def requests(approach: str, task: str, reviews=()):
    s = Script(reviews)
    params = {a: GenParams(temperature=0, top_p=1, max_tokens=1000, seed=42) for a in ("cand", "judge")}
    cfg = FlowConfig(extractor="judge", params=params, retriever="search", example=EXAMPLE)
    await run_set(cfg, "cand", approach, task, GS, s)
    return s.requests


def shape(message):
    """A message as (role, [text or image hash, ...])."""
    return message.role, [p.text if isinstance(p, TextPart) else p.sha256 for p in message.parts]


def test_the_sample_hint_is_read_as_the_file_holds_it():
    assert GS.hints[2] == (ROOT / GS.set_id / "Hint_3.txt").read_text(encoding="utf-8")


@pytest.mark.parametrize("approach", ["cot", "no_cot", "image_only", "hint_only"])
async def test_the_dynamic_conversation_text_for_text(approach):
    reqs = await requests(approach, "dynamic")
    guesses = [r for r in reqs if r.stage == approach]
    assert len(guesses) == 3
    third = guesses[2]

    def user(attempt: int, text: str):
        if approach != "image_only":
            text = with_hint(text, GS.hints[attempt - 1])
        parts = [text] if approach == "hint_only" else [GS.images[attempt - 1].sha256, text]
        return ("system", [SYSTEM]), ("user", parts)

    previous = "Your previous guess is: answer: tree. "  # the judge's "Answer: Tree", lower-cased
    expected = [*user(1, ASK[approach]), *user(2, previous + REVISE[approach]), *user(3, previous + REVISE[approach])]
    assert [shape(m) for m in third.messages] == expected
    assert [shape(m) for m in guesses[0].messages] == expected[:2]


async def test_the_static_turn_is_attempt_3():
    (guess,) = [r for r in await requests("cot", "static") if r.stage == "cot"]
    assert [shape(m) for m in guess.messages] == [("system", [SYSTEM]),
                                                  ("user", [GS.images[2].sha256, with_hint(ASK["cot"], GS.hints[2])])]


@pytest.mark.parametrize("task, attempts", [("static", 3), ("dynamic", 2)])
async def test_one_shot_message(task, attempts):
    reqs = [r for r in await requests("one_shot", task) if r.stage == "one_shot"]
    req = reqs[-1] if task == "static" else reqs[1]
    instruction = ASK["cot"] if task == "static" else "Your previous guess is: answer: tree. " + REVISE["cot"]
    task_image = GS.images[2] if task == "static" else GS.images[1]
    example = []
    for k in range(1, attempts + 1):
        example += [EXAMPLE.images[k - 1].sha256, f"Hint_{k}: {EXAMPLE.hints[k - 1]}"]
    assert shape(req.messages[-1]) == ("user", [
        task_image.sha256,
        "Your Task:\n" + with_hint(instruction, GS.hints[attempts - 1]),
        "\nI will give you an example to help you guess the build. Here is an example:",
        *example,
        "Answer: The build represents Glass of Milk.",
    ])


async def test_self_refine_review_and_extraction_text():
    reqs = await requests("self_refine", "static", reviews=["GUESS=Boat", "$Well done!$"])
    first, second, third = [r for r in reqs if r.stage == "self_refine"]
    review = ('\nPlease review your answer to check if it aligns with the given hint. If it does, you MUST ONLY output '
              '"$Well done!$" Otherwise, provide your improved guess.')
    assert second.messages[:2] == first.messages
    assert shape(second.messages[2]) == ("user", ["Here is your response: GUESS=Tree" + review])
    assert shape(third.messages[2]) == ("user", ["Here is your response: GUESS=Boat" + review])
    (extract,) = [r for r in reqs if r.stage == "self_refine/extract"]
    assert [shape(m) for m in extract.messages] == [
        ("user", [EXTRACT + "\n\nLanguage model's response: GUESS=Boat\n"])]
    assert extract.model == "judge" and extract.params == GenParams(temperature=0, top_p=1, max_tokens=1000, seed=42)


async def test_image_retrieval_review_and_extraction_text():
    reqs = await requests("image_retrieval", "static", reviews=["$Well done!$"])
    loop_extract = [r for r in reqs if r.stage == "image_retrieval/extract"][0]
    assert [shape(m) for m in loop_extract.messages] == [
        ("user", [EXTRACT + "\n\n    Language model's response: GUESS=Tree\n    "])]
    (search,) = [r for r in reqs if r.stage == "image_retrieval/retrieve"]
    assert search.messages[0].text() == "Tree"
    review = [r for r in reqs if r.stage == "image_retrieval"][1]
    ask = ("Previously, your guess was:  Tree.\n\nNow, I have searched for a real image of  Tree from Google Images "
           "and attached it above. Please compare the provided Minecraft build with the real image of your guess.\n\n"
           'If they match, you MUST ONLY output: "$Well done!$". Otherwise, provide your improved guess.')
    assert shape(review.messages[2]) == ("user", [ask, "Here is the provided Minecraft build.", GS.images[2].sha256,
                                                  "Here is the real image of your guess.", EXAMPLE.images[0].sha256])
    assert isinstance(review.messages[2].parts[4], ImagePart)
