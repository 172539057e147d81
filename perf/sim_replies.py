"""How long the simulator takes to answer one request, by kind, and a hash of every reply.

The shipped prompts of each benchmark (Creation-MMBench's pairwise and visual factuality judge, the
generic pairwise and rubric judge, MMIE's scorer, MMGenBench's caption prompt, GuessBench's guess
and extraction prompts) and a free-text question, each rendered with candidate answers of several
lengths, answered by ``judgekit.sim.replies.make_reply`` N times with different digests.  Prints,
per kind, the microseconds per reply (best of 5 rounds) and one sha256 over every reply's text,
kind, finish reason, token count and garbage flag: run it on two versions of judgekit (PYTHONPATH)
to compare their speed, and their replies byte for byte.

    python perf/sim_replies.py [N]
"""

from __future__ import annotations

import hashlib
import sys
import time

from judgekit.resources import load_prompt
from judgekit.sim.replies import make_reply


def _answer(n: int) -> str:
    words = "light shape story scene detail moment city river garden window market morning".split()
    return " ".join(words[i % len(words)] for i in range(n)) + "."


def _fill(text: str, **values: str) -> str:
    for k, v in values.items():
        text = text.replace("{" + k + "}", v)
    return text


def prompts() -> dict[str, list[str]]:
    """Kind -> the prompts to answer (several answer lengths each)."""
    lengths = (15, 60, 200)
    out: dict[str, list[str]] = {}
    pair = load_prompt("pairwise/arena_hard.txt").text
    single = load_prompt("rubric/mt_bench_single.txt").text
    out["generic"] = [_fill(pair, question="Why?", answer_a=_answer(a), answer_b=_answer(b)) for a in lengths
                      for b in lengths] + [_fill(single, question="Why?", answer=_answer(a)) for a in lengths]
    out["creation_pairwise"] = [
        f"Compare the two answers.\n[ASSISTANT A]\n{_answer(a)}\n[END ASSISTANT A]\n[ASSISTANT B]\n{_answer(b)}\n"
        "[END ASSISTANT B]\nEnd with your Final Verdict as [[A>B]] and the like." for a in lengths for b in lengths]
    out["creation_vfs"] = [p.replace("Final Verdict as [[A>B]] and the like", "Visual Factuality Score for each")
                           for p in out["creation_pairwise"]]
    out["mmie_score"] = [f"### Question\nWhat is drawn?\n### Answer\n{_answer(a)}\n### Feedback\n### Score\n0 to 6"
                         for a in lengths]
    out["caption"] = ["Write an image caption-prompt that a Text-to-Image model can use to draw this image."] * 3
    out["guess"] = [f"Guess the Build: look at this Minecraft build and determine what it represents. Hint: {h}"
                    for h in ("_ _ _", "c _ _", "the first letter is c")]
    out["extract"] = [f"Identify and extract the model's guessed answer.\nLanguage model's response: I think it is a "
                      f"{w}." for w in ("cat", "castle", "tree")]
    out["answer"] = [f"Tell me about item {i} in a few sentences." for i in range(3)]
    return out


def main(n: int = 300) -> None:
    total = hashlib.sha256()
    print(f"{'kind':<18} {'us/reply':>9}  replies sha256")
    for kind, texts in prompts().items():
        digests = [hashlib.sha256(f"{kind}-{i}".encode()).digest() for i in range(n)]
        best = float("inf")
        h = hashlib.sha256()
        for _ in range(5):
            h = hashlib.sha256()
            t0 = time.perf_counter()
            for i, d in enumerate(digests):
                r = make_reply(texts[i % len(texts)], d, quality=0.3 + 0.4 * (i % 3) / 2, max_tokens=400,
                               garbage=i % 17 == 0)
                h.update(repr((r.text, r.kind, r.finish_reason, r.completion_tokens, r.garbage)).encode())
            best = min(best, time.perf_counter() - t0)
        total.update(h.digest())
        print(f"{kind:<18} {1e6 * best / n:>9.1f}  {h.hexdigest()[:16]}")
    print(f"{'all':<18} {'':>9}  {total.hexdigest()[:16]}")


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 300)
