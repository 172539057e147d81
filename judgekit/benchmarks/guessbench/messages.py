"""The messages GuessBench sends, laid out as the authors' code lays them out (``evaluate_gpt.py``).

Prompt texts are the code's strings, in ``prompts/guessbench/``.  The layout:

- a turn adds two messages to the conversation: the system prompt, then one user message; a
  dynamic turn keeps every earlier turn's system and user messages before its own, and none of
  the model's replies (the previous guess comes back only inside the refinement instruction);
- the user message is the build image then the instruction (``{instruction}\\n\\nHint: {hint}\\n``;
  ``image_only``: the instruction alone; ``hint_only``: the text alone, no image);
- ``one_shot``: the build image, ``Your Task:\\n`` + the instruction, then the example: an
  introduction, the example's image and ``Hint_k: ...`` for k = 1 .. the current attempt (3 for the
  static task, which the code runs as attempt 3), and ``Answer: The build represents X.``;
- a review round (self-refine, image retrieval) sends the conversation so far plus one user
  message; the review is never kept for the next round or turn.  Self-refine's quotes the reply
  under review; image retrieval's is the instruction, ``Here is the provided Minecraft build.``,
  the build image, ``Here is the real image of your guess.`` and the retrieved image.
"""

from __future__ import annotations

from ...resources import Prompt, load_prompt
from ...types import ImagePart, Message, TextPart
from .data import GuessSet

__all__ = ["TurnPrompts"]

#: instruction variant of each approach (prompt file suffix); the others use the CoT instruction
_VARIANT = {"no_cot": "_no_cot", "image_only": "_image_only", "hint_only": "_hint_only"}


def _p(name: str) -> Prompt:
    return load_prompt(f"guessbench/{name}.txt")


class TurnPrompts:
    """The prompts of one approach and the messages built from them."""

    def __init__(self, approach: str, example: GuessSet | None = None, retrieval_source: str = "Google Images") -> None:
        self.approach = approach
        self.example = example if approach == "one_shot" else None
        self.retrieval_source = retrieval_source
        variant = _VARIANT.get(approach, "")
        self.system = _p("system")
        self.initial = _p(f"initial_guess{variant}")
        self.refine = _p(f"refine_guess{variant}")
        if approach == "self_refine":
            self.review: tuple[Prompt, ...] = (_p("self_refine"),)
        elif approach == "image_retrieval":
            self.review = (_p("image_retrieval"), _p("image_retrieval_build"), _p("image_retrieval_photo"))
        else:
            self.review = ()
        self.shot: tuple[Prompt, ...] = ()
        if self.example is not None:
            self.shot = (_p("one_shot_task"), _p("one_shot_intro"), _p("one_shot_hint"), _p("one_shot_answer"))

    def turn(self, gs: GuessSet, attempt: int,
             previous_guess: str | None) -> tuple[tuple[Message, Message], list[Prompt]]:
        """The system and user messages of ``attempt`` (1..3; the static task is attempt 3) and
        the prompt files they used.  ``previous_guess`` None: the initial instruction."""
        hint = gs.hints[attempt - 1]
        if previous_guess is None:
            prompt, text = self.initial, self.initial.render(hint=hint)
        else:
            prompt, text = self.refine, self.refine.render(hint=hint, previous_guess=previous_guess)
        used = [self.system, prompt]
        image = gs.images[attempt - 1]
        if self.approach == "hint_only":
            parts: tuple[ImagePart | TextPart, ...] = (TextPart(text),)
        elif self.example is not None:
            parts = (image, *self._with_example(text, attempt))
            used += self.shot
        else:
            parts = (image, TextPart(text))
        return (Message.system(self.system.text), Message("user", parts)), used

    def _with_example(self, text: str, attempt: int) -> list[ImagePart | TextPart]:
        ex = self.example
        assert ex is not None
        task, intro, hint, answer = self.shot
        out: list[ImagePart | TextPart] = [TextPart(task.render(prompt=text)), TextPart(intro.text)]
        for k in range(1, attempt + 1):
            out.append(ex.images[k - 1])
            out.append(TextPart(hint.render(n=str(k), hint=ex.hints[k - 1])))
        out.append(TextPart(answer.render(answer=ex.answer)))
        return out

    def self_refine(self, response: str) -> Message:
        """Self-refine's review message, quoting the reply under review."""
        return Message.user(self.review[0].render(response=response))

    def retrieval(self, guess: str, build: ImagePart, photo: ImagePart) -> Message:
        """Image retrieval's review message for ``guess`` (inserted as it is) and the retrieved ``photo``."""
        ask, build_line, photo_line = self.review
        return Message.user(ask.render(previous_guess=guess, source=self.retrieval_source), build_line.text, build,
                            photo_line.text, photo)
