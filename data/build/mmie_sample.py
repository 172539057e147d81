"""The shipped MMIE sample: twelve questions written and drawn here, in the released format.

None of it comes from the real benchmark.  Four questions per category, over eight of the
paper's twelve fields:

* situational analysis (literature, visual storytelling): the start of a story with its
  picture(s); the ground truth continues it with text and pictures;
* project-based learning (health, art, education, sports): a how-to question with its first
  step; the ground truth gives the next steps with pictures;
* multi-step reasoning (statistics, mathematics, physics): a bar chart to read, a right
  triangle, two graphs to compare, a spring stretched by two masses; the ground truth is a
  worked answer in text.

Four questions have two images.  Files written to OUT_DIR:

``data.json``
    the rows in the released format (``id``, ``conversations`` with a ``human`` and a ``gpt``
    turn, ``catagory`` as the data spells it, ``field``, ``subfield``);
``scorer_format.json``
    the same rows in the scorer's input format, with the ``answer`` of an imaginary model that
    writes interleaved text and images natively (``model``: ``sample-native``), so the native
    answer import has something to read;
``human_scores.csv``
    ``id,score``: made-up human scores 0..6 of those native answers, for the alignment path;
``images/``
    every picture, drawn with Pillow (320 x 256 px unless said), each PNG carrying a short
    description in its ``judgekit-label`` tEXt chunk (what judgekit's simulator "sees");
``README.md``
    says what the sample is.

Everything is fixed data and drawing; text is drawn with Pillow's built-in bitmap font (same
pixels everywhere) and PNGs are written without timestamps, so a run gives the same bytes.

    python data/build/mmie_sample.py [OUT_DIR]     # default: data/mmie beside this folder
"""

from __future__ import annotations

import argparse
import csv
import io
import json
from pathlib import Path
from typing import Any

from judgekit.pngtext import LABEL_KEY, png_with_text

from mmie_pictures import IMAGES

__all__ = ["SAMPLE_ROWS", "IMAGES", "NATIVE_MODEL", "write_sample", "main"]

NATIVE_MODEL = "sample-native"

# --------------------------------------------------------------------------- the rows

_SA_ASK = "I will give you the beginning of a story. Continue the story with text and images."
_PBL_ASK = ("I will give you a question and the first step to complete it. I want to know what should I do "
            "next. Explain it to me in detail with text and images.")
_MSR_ASK = "I will give you a question with image(s). Please solve this question."

Parts = list[tuple[str, str]]  # ("text", ...) | ("image", file name)


def _t(s: str) -> tuple[str, str]:
    return ("text", s)


def _i(name: str) -> tuple[str, str]:
    return ("image", name)


#: the rows: id, category (as the data spells it), field, subfield, question, ground truth,
#: the native model's answer, and the made-up human score (0..6) of that answer
SAMPLE_ROWS: list[dict[str, Any]] = [
    {"id": "SA_0001", "catagory": "Situational analysis", "field": "literature",
     "subfield": "visual storytelling",
     "question": [_t(_SA_ASK), _t("On the first windy afternoon of spring, Mia and her grandfather carried "
                                   "her new red kite up the hill behind the village."), _i("SA_0001_q1.png")],
     "gt": [_t("A strong gust lifted the kite so fast that the string slipped through Mia's fingers. It "
               "drifted across the field and came down in the branches of the old oak tree."),
            _i("SA_0001_gt1.png"),
            _t("Grandfather laughed, hooked the string with his walking stick and pulled the kite free. They "
               "flew it until the sun went down, this time with the string tied around Mia's wrist.")],
     "answer": [_t("The kite rose higher and higher until it was only a small red dot between the clouds."),
                _i("SA_0001_ans1.png"),
                _t("Mia held the string tight with both hands and decided that this was the best day of spring.")],
     "human": 5},
    {"id": "SA_0002", "catagory": "Situational analysis", "field": "literature",
     "subfield": "visual storytelling",
     "question": [_t(_SA_ASK), _t("Tom's little sailing boat had waited in the harbour all winter."),
                  _i("SA_0002_q1.png"),
                  _t("On Saturday morning he finally untied the ropes and steered out past the lighthouse."),
                  _i("SA_0002_q2.png")],
     "gt": [_t("By noon the sky turned grey, the wind rose and the waves began to throw the boat about."),
            _i("SA_0002_gt1.png"),
            _t("Tom lowered the sail, kept the lighthouse in sight and rowed slowly back to the harbour, "
               "soaked to the skin but proud that he had kept calm.")],
     "answer": [_t("Tom sailed. It was nice and he went home.")],
     "human": 1},
    {"id": "SA_0003", "catagory": "Situational analysis", "field": "literature",
     "subfield": "visual storytelling",
     "question": [_t(_SA_ASK), _t("The children built the biggest snowman the street had ever seen, with a "
                                   "carrot nose and a blue scarf."), _i("SA_0003_q1.png")],
     "gt": [_t("That night the wind turned warm. By the next afternoon the snowman had shrunk to a small "
               "white lump on the wet grass."),
            _i("SA_0003_gt1.png"),
            _t("The children hung the blue scarf on the garden gate and promised to build an even bigger "
               "snowman next winter.")],
     "answer": [_t("The next morning the children gave the snowman their father's old black hat, and everyone "
                   "who walked past stopped to smile at him."),
                _i("SA_0003_ans1.png")],
     "human": 4},
    {"id": "SA_0004", "catagory": "Situational analysis", "field": "literature",
     "subfield": "visual storytelling",
     "question": [_t(_SA_ASK), _t("It was Grandma's seventieth birthday, and the whole family squeezed "
                                   "into her small kitchen."), _i("SA_0004_q1.png")],
     "gt": [_t("She blew out all seven candles in one breath, and everyone cheered. Then her youngest "
               "grandson pushed a red parcel across the table."),
            _i("SA_0004_gt1.png"),
            _t("Inside was a photo album that the grandchildren had filled with pictures of seventy years of "
               "family birthdays.")],
     "answer": [_t("Grandma smiled and blew out the candles while everyone sang."), _i("SA_0004_ans1.png"),
                _t("Then they all ate cake and told stories until late in the evening.")],
     "human": 4},
    {"id": "PBL_0001", "catagory": "Project-based learning", "field": "health", "subfield": "hygiene",
     "question": [_t(_PBL_ASK), _t("How to Wash Your Hands Properly?\nStep 1: Wet your hands.\nHold both hands "
                                   "under clean running water, warm or cold."), _i("PBL_0001_q1.png")],
     "gt": [_t("Step 2: Apply soap.\nTurn off the tap and rub a bar of soap or a pump of liquid soap between "
               "your palms until it lathers."),
            _i("PBL_0001_gt1.png"),
            _t("Step 3: Scrub for at least 20 seconds.\nRub the backs of your hands, between your fingers and "
               "under your nails; humming 'Happy Birthday' twice takes about 20 seconds."),
            _i("PBL_0001_gt2.png"),
            _t("Step 4: Rinse and dry.\nRinse under running water and dry with a clean towel or let your hands "
               "air dry.")],
     "answer": [_t("Step 2: Use soap.\nRub the soap between your hands until there is foam, then wash it off."),
                _i("PBL_0001_ans1.png")],
     "human": 4},
    {"id": "PBL_0002", "catagory": "Project-based learning", "field": "art", "subfield": "painting",
     "question": [_t(_PBL_ASK), _t("How to Paint a Simple Sunset?\nStep 1: Paint the sky.\nBlend purple at "
                                   "the top of the paper into orange near the bottom while the paint is wet."),
                  _i("PBL_0002_q1.png")],
     "gt": [_t("Step 2: Add the sun.\nWhen the sky is dry, paint a yellow half circle sitting on the horizon."),
            _i("PBL_0002_gt1.png"),
            _t("Step 3: Paint the hills.\nWith a dark purple-brown, paint a line of rolling hills across the "
               "bottom so that they cover the lower edge of the sun."),
            _i("PBL_0002_gt2.png")],
     "answer": [_t("Step 2: Paint a big yellow sun in the middle of the sky and a dark strip of land at the "
                   "bottom. Let it dry before adding details."),
                _i("PBL_0002_ans1.png")],
     "human": 5},
    {"id": "PBL_0003", "catagory": "Project-based learning", "field": "education", "subfield": "study skills",
     "question": [_t(_PBL_ASK), _t("How to Make a Study Timetable?\nStep 1: List your subjects.\nWrite down "
                                   "every subject and how many hours a week it needs."), _i("PBL_0003_q1.png")],
     "gt": [_t("Step 2: Draw a weekly grid.\nMake one column per school day and one row per study slot."),
            _i("PBL_0003_gt1.png"),
            _t("Step 3: Fill in the slots.\nSpread each subject over the week so that no subject comes twice "
               "on the same day, and give the hardest subjects the first slot."),
            _i("PBL_0003_gt2.png")],
     "answer": [_t("Next you should study every day.")],
     "human": 2},
    {"id": "PBL_0004", "catagory": "Project-based learning", "field": "sports", "subfield": "badminton",
     "question": [_t(_PBL_ASK), _t("How to Set Up a Badminton Court in Your Garden?\nStep 1: Mark the court.\n"
                                   "Measure 13.4 m by 6.1 m on flat grass"), _i("PBL_0004_q1.png"),
                  _t("and mark the lines with tape or chalk."), _i("PBL_0004_q2.png")],
     "gt": [_t("Step 2: Put up the net.\nPlace one post outside each side line at the middle of the court and "
               "stretch the net between them so that its top is 1.55 m above the ground at the centre."),
            _i("PBL_0004_gt1.png"),
            _t("Step 3: Check the court.\nWalk the lines, remove stones and twigs, and make sure the net does "
               "not sag before you start to play.")],
     # the answer's last text comes after the third image in all: the reference's scorer does not read it
     "answer": [_t("Step 2: Put a net in the middle of the court between two posts."), _i("PBL_0004_ans1.png"),
                _t("Step 3: Play a short game to check the court.")],
     "human": 3},
    {"id": "MSR_0001", "catagory": "Multi-step reasoning", "field": "statistics", "subfield": "bar chart",
     "question": [_t(_MSR_ASK), _t("The bar chart shows how many apples a market stall sold on four days."),
                  _i("MSR_0001_q1.png"),
                  _t("How many apples were sold in total, and on which day were the most apples sold?")],
     "gt": [_t("Reading the bars: Monday 12, Tuesday 7, Wednesday 15, Thursday 9. The total is 12 + 7 + 15 + 9 "
               "= 43. The tallest bar is Wednesday's. Answer: 43 apples; most were sold on Wednesday.")],
     "answer": [_t("The bars show 12, 7, 13 and 9 apples, so 12 + 7 + 13 + 9 = 41 apples in total. The most "
                   "were sold on Wednesday.")],
     "human": 3},
    {"id": "MSR_0002", "catagory": "Multi-step reasoning", "field": "mathematics", "subfield": "geometry",
     "question": [_t(_MSR_ASK), _i("MSR_0002_q1.png"),
                  _t("The figure shows a right triangle. Find the length of its hypotenuse and its area.")],
     "gt": [_t("By Pythagoras, the hypotenuse is sqrt(6^2 + 8^2) = sqrt(100) = 10 cm. The area is half the "
               "product of the legs: 6 x 8 / 2 = 24 cm^2. Answer: 10 cm and 24 cm^2.")],
     "answer": [_t("The legs are 6 cm and 8 cm. The hypotenuse is sqrt(36 + 64) = 10 cm."), _i("MSR_0002_ans1.png"),
                _t("The area is 6 x 8 / 2 = 24 cm^2. Answer: 10 cm, 24 cm^2.")],
     "human": 6},
    {"id": "MSR_0003", "catagory": "Multi-step reasoning", "field": "mathematics", "subfield": "graph theory",
     "question": [_t(_MSR_ASK), _t("Here are two graphs. The first image is graph A."), _i("MSR_0003_q1.png"),
                  _t("The second image is graph B."), _i("MSR_0003_q2.png"),
                  _t("Are the two graphs isomorphic? Answer yes or no and explain.")],
     "gt": [_t("Both graphs have 4 vertices and 4 edges, and every vertex has degree 2. Graph A is the cycle "
               "A-B-C-D-A and graph B is the cycle 1-3-2-4-1. The map A->1, B->3, C->2, D->4 sends every edge "
               "of A to an edge of B. Answer: yes, they are isomorphic.")],
     "answer": [_t("Both graphs have four vertices of degree 2 and four edges, and both are a single cycle "
                   "(A-B-C-D-A and 1-3-2-4-1). So yes, they are isomorphic.")],
     "human": 5},
    {"id": "MSR_0004", "catagory": "Multi-step reasoning", "field": "physics", "subfield": "mechanics",
     "question": [_t(_MSR_ASK), _t("The same spring is shown in both images."), _i("MSR_0004_q1.png"),
                  _i("MSR_0004_q2.png"),
                  _t("The spring obeys Hooke's law. How far does it stretch with the 5 kg block?")],
     "gt": [_t("By Hooke's law the stretch is proportional to the weight. 2 kg stretches it 4 cm, so 1 kg "
               "stretches it 2 cm and 5 kg stretches it 5 x 2 = 10 cm. Answer: 10 cm.")],
     "answer": [_t("The spring stretches 4 cm for 2 kg, so with 5 kg it stretches 4 + 5 = 9 cm... or about "
                   "12.5 cm. Answer: 12.5 cm.")],
     "human": 1},
]

_README = """\
# MMIE sample (synthetic)

Made by judgekit, not taken from MMIE: twelve questions written for this sample, four per
category (situational analysis, project-based learning, multi-step reasoning), over eight of
the paper's fields (literature, health, art, education, sports, statistics, mathematics,
physics), with pictures drawn with Pillow. Regenerate (same bytes every time):

    python data/build/mmie_sample.py data/mmie

## Files

- `data.json`: the rows in the released format, a JSON list of
  `{"id", "conversations": [{"from": "human", "content": [...]}, {"from": "gpt", "content": [...]}],
  "catagory", "field", "subfield"}`. The `human` turn is the question, the `gpt` turn the ground
  truth; each content entry is `{"text": ..., "image": ...}` with one of the two null. `catagory`
  is misspelt as in the real data. Ids carry the category code (`SA_`, `PBL_`, `MSR_`).
- `scorer_format.json`: the same rows in the input format of the authors' scorer, a JSON list of
  `{"id", "question": [...], "answer": [...], "model", "gt_answer": [...]}`, where `answer` is
  the interleaved answer of an imaginary model (`sample-native`) that writes text and images
  itself; its pictures are the `images/*_ans*.png`.
- `human_scores.csv`: `id,score`, made-up human scores (0..6) of those answers, for the
  scorer-human alignment (paper Table 5).
- `images/`: every picture; the image paths in the JSON files (`images/...`) are relative to the
  folder holding them. Each
  PNG has a `judgekit-label` text chunk describing it, which judgekit's simulator reads;
  real models ignore it.
"""


def _content(parts: Parts) -> list[dict[str, str | None]]:
    return [{"text": v, "image": None} if k == "text" else {"text": None, "image": f"images/{v}"}
            for k, v in parts]


def _json_bytes(value: Any) -> bytes:
    return (json.dumps(value, ensure_ascii=False, indent=2) + "\n").encode("utf-8")


def _png(name: str) -> bytes:
    label, draw = IMAGES[name]
    return png_with_text(draw(), [(LABEL_KEY, label)])


def write_sample(out_dir: str | Path) -> Path:
    """Write the sample into ``out_dir`` (created if needed) and return it."""
    out = Path(out_dir)
    (out / "images").mkdir(parents=True, exist_ok=True)
    used = {v for r in SAMPLE_ROWS for key in ("question", "gt", "answer") for k, v in r[key] if k == "image"}
    missing = used - IMAGES.keys()
    if missing:  # pragma: no cover - a mistake in the tables above
        raise RuntimeError(f"images without a drawing: {sorted(missing)}")
    for name in sorted(IMAGES):
        (out / "images" / name).write_bytes(_png(name))
    released = [{"id": r["id"],
                 "conversations": [{"from": "human", "content": _content(r["question"])},
                                   {"from": "gpt", "content": _content(r["gt"])}],
                 "catagory": r["catagory"], "field": r["field"], "subfield": r["subfield"]}
                for r in SAMPLE_ROWS]
    (out / "data.json").write_bytes(_json_bytes(released))
    scorer = [{"id": r["id"], "question": _content(r["question"]), "answer": _content(r["answer"]),
               "model": NATIVE_MODEL, "gt_answer": _content(r["gt"])} for r in SAMPLE_ROWS]
    (out / "scorer_format.json").write_bytes(_json_bytes(scorer))
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(["id", "score"])
    for r in SAMPLE_ROWS:
        w.writerow([r["id"], r["human"]])
    (out / "human_scores.csv").write_bytes(buf.getvalue().encode("utf-8"))
    (out / "README.md").write_bytes(_README.encode("utf-8"))
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python data/build/mmie_sample.py",
                                     description="Write judgekit's synthetic MMIE sample.")
    parser.add_argument("out_dir", nargs="?", default=str(Path(__file__).resolve().parents[1] / "mmie"),
                        help="output folder (default: %(default)s)")
    args = parser.parse_args(argv)
    out = write_sample(args.out_dir)
    print(f"wrote the MMIE sample to {out}")
    return 0


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())
