"""What the generic pairwise benchmark's tests share: a user's spec, prompt file and JSONL of
questions written into a folder, as a new user would write them (imported by name: pytest puts
this folder on sys.path)."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

from PIL import Image, ImageDraw

from judgekit.config import load_spec
from judgekit.runner import RunOptions, run_spec

#: a judge prompt the user writes: Creation-MMBench-like answer blocks, Arena-Hard's verdicts
PROMPT = """Please act as an impartial judge and compare two answers to the user's question.
{images}
[Question]
{question}

[Reference answer]
{reference}

[ASSISTANT A]
{answer_a}
[END ASSISTANT A]

[ASSISTANT B]
{answer_b}
[END ASSISTANT B]

Judge against the criteria: {criteria}. End with your final verdict, one of:
[[A>>B]], [[A>B]], [[A=B]], [[B>A]], [[B>>A]].
"""

QUESTIONS = [
    {"id": "a1", "category": "math", "question": "What is 17 + 25? Show the sum.",
     "reference": "42", "criteria": "correct sum", "expert": "17 + 25 = 42."},
    {"id": "a2", "category": "math", "question": "Is 91 a prime number?",
     "reference": "No: 91 = 7 x 13.", "criteria": "a factorisation", "expert": "No, 91 is 7 times 13."},
    {"id": "a3", "category": "visual", "question": "What colour is the square in the picture?",
     "images": ["square.png"], "reference": "Blue.", "criteria": "names the colour", "expert": "It is blue."},
    {"id": "a4", "category": "writing", "question": "Write one sentence inviting a friend to lunch.",
     "reference": "Would you like to have lunch with me on Friday?", "criteria": "one polite sentence",
     "expert": "Shall we have lunch together this Friday?"},
]

SIM = 'sim = { seed = 7, latency_ms = 0, judge_styles = { sim-judge-2 = { first_slot_bias = 0.5 } }GARBAGE }'

SPEC = """name = "my-eval"
benchmark = "pairwise"
data = "questions.jsonl"

[options]
judge_prompt = "judge.txt"
verdict = "arena_hard"
bootstrap_samples = 200
OPTIONS
[models.my-vlm]
provider = "sim"
model = "sim-vlm-strong"
SIM
[models.baseline]
provider = "sim"
model = "sim-vlm-weak"
SIM
[models.judge]
provider = "sim"
model = "sim-judge"
SIM
[models.judge-2]
provider = "sim"
model = "sim-judge-2"
SIM

[roles]
ROLES
"""


def write_case(folder: Path, *, options: str = "", roles: str | None = None, rows: list[dict] | None = None,
               prompt: str = PROMPT, garbage: float = 0.0) -> Path:
    """The user's files in ``folder``: questions.jsonl (with a drawn PNG), judge.txt and spec.toml;
    returns the spec's path."""
    folder.mkdir(parents=True, exist_ok=True)
    im = Image.new("RGB", (64, 64), "white")
    ImageDraw.Draw(im).rectangle((16, 16, 48, 48), fill=(30, 60, 200))
    im.save(folder / "square.png")
    with open(folder / "questions.jsonl", "w", encoding="utf-8") as f:
        for r in QUESTIONS if rows is None else rows:
            f.write(json.dumps(r) + "\n")
    (folder / "judge.txt").write_text(prompt, encoding="utf-8")
    roles = roles if roles is not None else 'candidates = ["my-vlm"]\njudge = "judge"\nbaseline = "baseline"'
    sim = SIM.replace("GARBAGE", f", garbage_rate = {garbage}" if garbage else "")
    if "verdict =" in options:  # the options name their own parser
        spec = SPEC.replace('verdict = "arena_hard"\n', "")
    else:
        spec = SPEC
    spec = spec.replace("OPTIONS", options).replace("SIM", sim).replace("ROLES", roles)
    path = folder / "spec.toml"
    path.write_text(spec, encoding="utf-8")
    return path


def run(spec_path: Path, out: str = "out", *overrides: str):
    """``judgekit run`` through the library, the cache beside the spec."""
    spec = load_spec(str(spec_path), list(overrides))
    root = spec_path.parent
    return asyncio.run(run_spec(spec, RunOptions(out_dir=root / out, cache_path=root / "cache.duckdb")))


def answers_file(path: Path, answers: dict[str, str]) -> Path:
    with open(path, "w", encoding="utf-8") as f:
        for k, v in answers.items():
            f.write(json.dumps({"id": k, "answer": v}) + "\n")
    return path
