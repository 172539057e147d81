"""A small, self-made Creation-MMBench sample: 12 rows, 3 per category, in both released layouts.

Every row is written for judgekit (images drawn with Pillow here, texts written by hand in
``creation_mmbench_rows.json`` next to this script); none comes from the real benchmark.  The rows
exercise what the loader must handle: a list of three images, an ``image`` pointer to another
row, plain-string criteria without visual factuality criteria, a ground truth, one PNG among
JPEGs, and multi-line quoted fields.  The same rows are also written as the Hugging Face
dataset's parquet (``data/test-00000-of-00001.parquet`` next to the TSV: ``image`` a sequence of
``{bytes, path}``, a pointer row holding the images it points to).

    python data/build/creation_mmbench_sample.py OUT.tsv [--parquet OUT.parquet] [--seed N]

Made-up human ratings of the sample (``human_ratings.csv`` beside it, for the Table 4 sample
runner ``runners/creation_mmbench_table4_sample.toml``): the runner's three simulated candidates
are judged once by a noiseless, unbiased simulated judge (``JudgeStyle(noise=0)``: its verdict is
a fixed function of the two answers' quality, the same in both orders), and four made-up raters
rate each (candidate, item) around that verdict with their own spread and leniency
(:data:`HUMAN_RATERS`), rounded to the -2..+2 scale.  So a simulated judge with less position bias
and noise aligns better with them.  The verdict is kept in the file's ``sim_reference`` column
(not a rating column: the reader ignores it), from which :func:`write_human_ratings` rewrites the
same bytes.

    python data/build/creation_mmbench_sample.py --human-ratings OUT.csv [--seed N]
"""

from __future__ import annotations

import argparse
import base64
import csv
import io
import json
import math
import random
from collections.abc import Mapping
from pathlib import Path
from typing import Callable

from PIL import Image, ImageDraw, ImageFont

from judgekit.benchmarks.creation_mmbench.prompts import compose_question
from judgekit.benchmarks.creation_mmbench.tasks import normalise_task, task_categories

__all__ = ["COLUMNS", "HUMAN_RATERS", "HUMAN_RATINGS_RUNNER", "write_sample", "write_sample_parquet",
           "reference_verdicts", "human_ratings", "write_human_ratings",
           "QUICKSTART_RUNNER", "human_labels", "write_human_labels", "read_reference", "main"]

#: the real file's columns, in its order
COLUMNS = (
    "index", "question", "task_name", "role", "background", "instruction", "requirement",
    "ground_truth", "source", "criteria", "image_path", "reference_answer_by_gpt4o", "image",
)
_W, _H = 320, 240
_SOURCE = "judgekit synthetic sample (drawn with Pillow)"


def _font(size: int = 14) -> ImageFont.ImageFont | ImageFont.FreeTypeFont:
    try:
        return ImageFont.load_default(size=size)
    except TypeError:  # Pillow without FreeType
        return ImageFont.load_default()


def _canvas(bg: str) -> tuple[Image.Image, ImageDraw.ImageDraw]:
    im = Image.new("RGB", (_W, _H), bg)
    return im, ImageDraw.Draw(im)


# --------------------------------------------------------------------------- drawings


def _landscape(rng: random.Random) -> Image.Image:
    im, d = _canvas("#8ec9f0")
    d.ellipse((230, 25, 285, 80), fill="#ffd23f")  # sun
    for _ in range(3):  # clouds
        x, y = rng.randint(20, 180), rng.randint(20, 70)
        d.ellipse((x, y, x + 50, y + 20), fill="white")
        d.ellipse((x + 20, y - 8, x + 60, y + 16), fill="white")
    d.ellipse((-80, 130, 200, 330), fill="#5a9e4b")  # far hill
    d.ellipse((120, 150, 420, 360), fill="#3f7f36")  # near hill
    d.rectangle((0, 215, _W, _H), fill="#2f6b8f")  # lake
    for x in (60, 85, 250):  # trees
        d.rectangle((x + 6, 170, x + 10, 190), fill="#5b3a1e")
        d.polygon([(x, 172), (x + 8, 145), (x + 16, 172)], fill="#1f4d1a")
    return im


def _kite_panel(step: int) -> Callable[[random.Random], Image.Image]:
    def draw(rng: random.Random) -> Image.Image:
        im, d = _canvas("#bfe3ff")
        d.rectangle((0, 190, _W, _H), fill="#7cc26b")
        d.rectangle((250, 110, 262, 190), fill="#6b4423")  # tree trunk
        d.ellipse((215, 60, 300, 130), fill="#2e8b3a")
        x = 70 + 50 * step  # the girl walks right
        d.ellipse((x - 8, 132, x + 8, 148), fill="#f1c27d")
        d.line((x, 148, x, 172), fill="black", width=3)
        d.line((x, 172, x - 8, 190), fill="black", width=3)
        d.line((x, 172, x + 8, 190), fill="black", width=3)
        d.line((x, 155, x + 12, 145), fill="black", width=3)
        kite = [(40, 170), (110, 60), (215, 78)][step]
        kx, ky = kite
        d.polygon([(kx, ky - 14), (kx + 10, ky), (kx, ky + 14), (kx - 10, ky)], fill="#e63946")
        d.line((x + 12, 145, kx, ky + 14), fill="#444444", width=1)
        d.text((8, 8), f"Panel {step + 1}", fill="black", font=_font(16))
        return im

    return draw


def _cafe(rng: random.Random) -> Image.Image:
    im, d = _canvas("#f4e3c9")
    d.rectangle((0, 170, _W, _H), fill="#a47148")  # floor
    d.rectangle((110, 140, 210, 150), fill="#5c3b1e")  # table
    d.rectangle((155, 150, 165, 200), fill="#5c3b1e")
    for cx, shirt in ((80, "#457b9d"), (240, "#e76f51")):
        d.ellipse((cx - 14, 70, cx + 14, 98), fill="#f1c27d")
        d.rectangle((cx - 18, 98, cx + 18, 150), fill=shirt)
    d.rectangle((128, 128, 140, 140), fill="white")  # cups
    d.rectangle((180, 128, 192, 140), fill="white")
    d.rectangle((120, 20, 200, 50), fill="#2b2d42")
    d.text((128, 26), "CAFE", fill="white", font=_font(18))
    return im


def _phone_ui(rng: random.Random) -> Image.Image:
    im, d = _canvas("#d9d9d9")
    d.rounded_rectangle((95, 5, 225, 235), radius=16, fill="#111111")
    d.rectangle((103, 20, 217, 220), fill="#f7f7f7")
    for i in range(3):  # app grid
        for j in range(2):
            d.rounded_rectangle((112 + 36 * i, 30 + 36 * j, 140 + 36 * i, 58 + 36 * j), radius=6, fill="#8ecae6")
    d.rounded_rectangle((108, 110, 212, 200), radius=8, fill="white", outline="#888888")
    f = _font(10)
    d.text((114, 116), "Unable to Delete", fill="black", font=f)
    d.text((114, 132), "\"PhotoMix\" is in use", fill="#333333", font=f)
    d.text((114, 146), "by a profile.", fill="#333333", font=f)
    d.line((108, 170, 212, 170), fill="#cccccc")
    d.text((122, 178), "OK", fill="#0a84ff", font=f)
    d.text((160, 178), "Settings", fill="#0a84ff", font=f)
    return im


def _run_poster(rng: random.Random) -> Image.Image:
    im, d = _canvas("#1d3557")
    d.text((20, 18), "Riverside 5K Fun Run", fill="#f1faee", font=_font(22))
    d.text((20, 55), "Saturday 14 June, 8:00 AM", fill="#a8dadc", font=_font(14))
    d.text((20, 80), "Finisher: Mia Chen  #218", fill="#f1faee", font=_font(14))
    d.text((20, 105), "Time 27:41   Place 34 / 260", fill="#ffd166", font=_font(14))
    d.rectangle((20, 140, 300, 146), fill="#e63946")
    for i in range(6):  # a row of runners as dots
        x = 40 + 45 * i + rng.randint(-4, 4)
        d.ellipse((x, 170, x + 14, 184), fill="#f1faee")
        d.line((x + 7, 184, x + 7, 210), fill="#f1faee", width=3)
    return im


def _bar_chart(rng: random.Random) -> Image.Image:
    im, d = _canvas("white")
    f = _font(12)
    d.text((60, 8), "Quarterly sales, thousand units", fill="black", font=f)
    d.line((40, 200, 300, 200), fill="black", width=2)
    d.line((40, 30, 40, 200), fill="black", width=2)
    values = (("Q1", 12), ("Q2", 18), ("Q3", 25), ("Q4", 31))
    for i, (q, v) in enumerate(values):
        x = 60 + 60 * i
        top = 200 - v * 5
        d.rectangle((x, top, x + 36, 200), fill=("#264653", "#2a9d8f", "#e9c46a", "#f4a261")[i])
        d.text((x + 10, top - 16), str(v), fill="black", font=f)
        d.text((x + 10, 206), q, fill="black", font=f)
    return im


def _menu(rng: random.Random) -> Image.Image:
    im, d = _canvas("#fffaf0")
    d.text((70, 10), "Green Bowl Cafe", fill="#2d6a4f", font=_font(22))
    items = (
        ("Quinoa salad with chickpeas", "420 kcal"),
        ("Grilled salmon, brown rice", "610 kcal"),
        ("Tofu stir-fry, vegetables", "480 kcal"),
        ("Beef burger with fries", "890 kcal"),
        ("Mango yoghurt smoothie", "260 kcal"),
    )
    f = _font(13)
    for i, (name, kcal) in enumerate(items):
        y = 52 + 34 * i
        d.text((16, y), name, fill="black", font=f)
        d.text((240, y), kcal, fill="#bc4749", font=f)
        d.line((16, y + 22, 304, y + 22), fill="#dddddd")
    return im


def _flowchart(rng: random.Random) -> Image.Image:
    im, d = _canvas("white")
    f = _font(11)

    def box(x0: int, y0: int, x1: int, y1: int, label: str) -> None:
        d.rectangle((x0, y0, x1, y1), outline="black", width=2)
        d.text((x0 + 6, y0 + 6), label, fill="black", font=f)

    d.ellipse((120, 6, 200, 30), outline="black", width=2)
    d.text((142, 11), "Start", fill="black", font=f)
    box(100, 45, 220, 72, "Enter user/password")
    d.polygon([(160, 88), (215, 112), (160, 136), (105, 112)], outline="black")
    d.text((138, 105), "Valid?", fill="black", font=f)
    box(200, 165, 310, 192, "Show dashboard")
    box(10, 165, 120, 192, "Show error")
    d.line((160, 30, 160, 45), fill="black", width=2)
    d.line((160, 72, 160, 88), fill="black", width=2)
    d.line((215, 112, 255, 112, 255, 165), fill="black", width=2)
    d.text((222, 96), "yes", fill="black", font=f)
    d.line((105, 112, 65, 112, 65, 165), fill="black", width=2)
    d.text((78, 96), "no", fill="black", font=f)
    d.line((10, 178, 4, 178, 4, 58, 100, 58), fill="#888888", width=1)  # retry loop
    d.text((8, 200), "retry (max 3)", fill="#555555", font=_font(10))
    return im


def _report(rng: random.Random) -> Image.Image:
    im, d = _canvas("#fdfdfd")
    d.text((12, 8), "Lake Rowan Water Quality Report 2024", fill="black", font=_font(13))
    f = _font(10)
    lines = (
        "Nitrate rose from 1.2 to 2.9 mg/L (2019-2024).",
        "Main source: fertiliser run-off, north farms.",
        "Recommendation: 20 m buffer strips by 2026.",
    )
    for i, line in enumerate(lines):
        d.text((12, 32 + 15 * i), line, fill="#333333", font=f)
    d.line((30, 215, 300, 215), fill="black")
    d.line((30, 90, 30, 215), fill="black")
    pts = [(45 + 50 * i, 215 - int(v * 40)) for i, v in enumerate((1.2, 1.5, 1.9, 2.2, 2.6, 2.9))]
    d.line(pts, fill="#d62828", width=2)
    for i, (x, y) in enumerate(pts):
        d.ellipse((x - 3, y - 3, x + 3, y + 3), fill="#d62828")
        d.text((x - 10, 220), str(2019 + i), fill="black", font=_font(8))
    return im


def _ad_poster(rng: random.Random) -> Image.Image:
    im, d = _canvas("#ffb703")
    d.ellipse((40, 60, 160, 180), fill="#fb8500")  # an orange that is also the sun
    for k in range(12):
        a = k * math.pi / 6
        d.line((100 + 66 * math.cos(a), 120 + 66 * math.sin(a), 100 + 86 * math.cos(a), 120 + 86 * math.sin(a)),
               fill="#fb8500", width=4)
    d.rectangle((200, 70, 250, 190), fill="#023047")  # a can
    d.text((205, 120), "Orange", fill="white", font=_font(10))
    d.text((205, 134), "Fizz", fill="white", font=_font(10))
    d.text((20, 10), "Drink the Sun.", fill="#023047", font=_font(24))
    d.text((20, 205), "No added sugar. Just sunshine.", fill="#023047", font=_font(13))
    return im


def _city_map(rng: random.Random) -> Image.Image:
    im, d = _canvas("#eef3e2")
    d.rectangle((0, 150, _W, 185), fill="#8ecae6")  # river
    d.rectangle((150, 140, 170, 195), fill="#9c6644")  # old bridge
    d.line((0, 60, _W, 60), fill="#bbbbbb", width=6)
    d.line((90, 0, 90, 150), fill="#bbbbbb", width=6)
    f = _font(11)
    for (x, y, label, colour) in (
        (40, 30, "Hotel", "#e63946"),
        (200, 30, "City Museum", "#6a4c93"),
        (40, 100, "Rose Park", "#2a9d8f"),
        (175, 120, "Old Bridge", "#9c6644"),
        (220, 200, "Harbour Market", "#f4a261"),
    ):
        d.ellipse((x - 5, y - 5, x + 5, y + 5), fill=colour)
        d.text((x + 8, y - 7), label, fill="black", font=f)
    return im


# --------------------------------------------------------------------------- rows

#: what ``drawings`` in ``creation_mmbench_rows.json`` names
_DRAWINGS: dict[str, Callable[[random.Random], Image.Image]] = {
    "landscape": _landscape,
    "kite_panel_0": _kite_panel(0),
    "kite_panel_1": _kite_panel(1),
    "kite_panel_2": _kite_panel(2),
    "cafe": _cafe,
    "phone_ui": _phone_ui,
    "run_poster": _run_poster,
    "bar_chart": _bar_chart,
    "menu": _menu,
    "flowchart": _flowchart,
    "report": _report,
    "ad_poster": _ad_poster,
    "city_map": _city_map,
}

#: the written texts of the 12 rows: questions, criteria, reference answers
_ROWS_FILE = Path(__file__).with_name("creation_mmbench_rows.json")


def _rows() -> list[dict[str, object]]:
    """The 12 rows from ``creation_mmbench_rows.json``; ``drawings`` is a list of (file name, drawing
    function) pairs (several = several images) or, a str, a pointer to another row's index."""
    rows = json.loads(_ROWS_FILE.read_text(encoding="utf-8"))["rows"]
    for row in rows:
        drawings = row["drawings"]
        if not isinstance(drawings, str):
            row["drawings"] = [(name, _DRAWINGS[drawing]) for name, drawing in drawings.items()]
    return rows


def _category_of(task: str) -> str:
    return task_categories()[normalise_task(task)]


def _encode(im: Image.Image, name: str) -> str:
    buf = io.BytesIO()
    if name.endswith(".png"):
        im.save(buf, format="PNG", optimize=True)
    else:
        im.save(buf, format="JPEG", quality=70, optimize=True)
    return base64.b64encode(buf.getvalue()).decode("ascii")


def write_sample(path: str | Path, seed: int = 0) -> Path:
    """Write the 12-row sample TSV to ``path`` (same columns and quoting as the real file)."""
    rng = random.Random(seed)
    out = Path(path)
    out.parent.mkdir(parents=True, exist_ok=True)
    records = []
    for row in _rows():
        drawings = row["drawings"]
        if isinstance(drawings, str):  # a pointer to another row's index
            image, image_path = drawings, str(row["image_path"])
        else:
            b64s = [_encode(draw(rng), name) for name, draw in drawings]
            names = [name for name, _ in drawings]
            image = b64s[0] if len(b64s) == 1 else repr(b64s)
            image_path = names[0] if len(names) == 1 else repr(names)
        criteria = row["criteria"]
        question = compose_question(
            role=str(row["role"]),
            background=str(row["background"]),
            instruction=str(row["instruction"]),
            requirement=str(row["requirement"]),
        )
        _category_of(str(row["task_name"]))  # every sample task must be in the table
        records.append(
            {
                "index": row["index"],
                "question": question,
                "task_name": row["task_name"],
                "role": row["role"],
                "background": row["background"],
                "instruction": row["instruction"],
                "requirement": row["requirement"],
                "ground_truth": row.get("ground_truth", ""),
                "source": _SOURCE,
                "criteria": criteria if isinstance(criteria, str) else repr(criteria),
                "image_path": image_path,
                "reference_answer_by_gpt4o": row["answer"],
                "image": image,
            }
        )
    with out.open("w", encoding="utf-8", newline="") as fh:
        w = csv.writer(fh, delimiter="\t", quotechar='"', quoting=csv.QUOTE_MINIMAL, lineterminator="\n")
        w.writerow(COLUMNS)
        for rec in records:
            w.writerow([rec[c] for c in COLUMNS])
    return out


def write_sample_parquet(tsv: str | Path, out: str | Path) -> Path:
    """Write the rows of the sample TSV ``tsv`` as the Hugging Face dataset's parquet ``out``."""
    from judgekit.benchmarks.creation_mmbench.data import tsv_to_parquet

    return tsv_to_parquet(tsv, out)


# --------------------------------------------------------------------------- made-up human ratings

#: the made-up raters of ``human_ratings.csv``: (column, spread, leniency).  A rating is the
#: reference verdict plus the rater's leniency plus Gaussian noise of that spread, rounded and
#: clamped to -2..+2.  The spreads (0.55-0.85) put one rater against the mean of the others at an
#: MAE of about 0.6-0.8, near the paper's human-human alignment (supplement Table 7: 0.60-0.82).
HUMAN_RATERS: tuple[tuple[str, float, float], ...] = (
    ("human_1", 0.55, 0.0), ("human_2", 0.85, 0.25), ("human_3", 0.75, -0.2), ("human_4", 0.6, 0.05),
)
#: the runner whose candidates the ratings rate
HUMAN_RATINGS_RUNNER = "creation_mmbench_table4_sample"
_REFERENCE_MODEL = "sim-judge-reference"
_REFERENCE_COLUMN = "sim_reference"


def reference_verdicts(runner: str = HUMAN_RATINGS_RUNNER, work_dir: str | Path | None = None,
                       limit: int | None = None) -> dict[tuple[str, str], int]:
    """``(candidate alias, index) -> verdict`` (-2..+2, the candidate's point of view) of a
    noiseless, unbiased simulated judge on ``runner``'s candidates: the runner is run once with
    that judge alone (pairwise, both orders, no VFS; its first ``limit`` items) in a temporary
    folder under ``work_dir``.  Raises RuntimeError when the run fails or the orders disagree."""
    import asyncio
    import tempfile

    from judgekit.config import RunSpec, load_spec
    from judgekit.runner import RunOptions, run_spec

    spec = load_spec(runner)
    data = spec.model_dump()
    data["models"]["reference-judge"] = {**data["models"][spec.roles.panel[0]], "model": _REFERENCE_MODEL}
    data["roles"] = {**data["roles"], "judge": "reference-judge", "judges": ["reference-judge"]}
    # one simulator for all (the candidates' answers do not depend on judge styles, latency or faults
    # of judge replies), answering at once; the reference judge's style is noiseless and unbiased
    drop = ("latency_ms", "latency_jitter_ms", "garbage_rate", "reply_faults", "reply_fault_models")
    for alias in (*spec.roles.candidates, "reference-judge"):
        m = data["models"][alias]
        if m.get("sim") is not None:
            m["sim"] = {**{k: v for k, v in m["sim"].items() if k not in drop},
                        "judge_styles": {_REFERENCE_MODEL: {"noise": 0.0}}}
    opts = {k: v for k, v in data["options"].items() if k not in ("human_ratings", "human_labels")}
    data["options"] = {**opts, "pairwise": True, "vfs": False, "dual": True}
    ref_spec = RunSpec.model_validate(data)
    with tempfile.TemporaryDirectory(dir=work_dir) as tmp:
        out = asyncio.run(run_spec(ref_spec, RunOptions(out_dir=Path(tmp) / "out", cache_path=Path(tmp) / "cache.duckdb",
                                                        limit=limit, yes=True)))
        if out.exit_code != 0 or out.result is None:
            raise RuntimeError(f"the reference run of {runner} failed: {out.message}")
        judgments = out.result.tables["judgments"]
    verdicts: dict[tuple[str, str], set[int]] = {}
    for j in judgments:
        if j["kind"] != "pairwise":
            continue
        if not j["ok"]:
            raise RuntimeError(f"the reference judge gave no verdict for {j['model']} item {j['index']}")
        verdicts.setdefault((str(j["model"]), str(j["index"])), set()).add(int(j["score"]))
    split = [k for k, v in verdicts.items() if len(v) != 1]
    if split:
        raise RuntimeError(f"the noiseless judge's two orders disagree on {split[0]}")
    return {k: v.pop() for k, v in verdicts.items()}


def human_ratings(reference: Mapping[tuple[str, str], int], seed: int = 0) -> list[dict[str, object]]:
    """The made-up ratings of every ``(model, index)`` of ``reference`` (its verdict): one row
    each, ``index, model, human_1..human_4, sim_reference``, sorted by model then index.  Each
    (model, index) draws from its own seeded stream, so the rows do not depend on each other."""
    def order(key: tuple[str, str]) -> tuple[str, int, str]:
        model, index = key
        return (model, int(index), "") if index.isdigit() else (model, -1, index)

    rows: list[dict[str, object]] = []
    for model, index in sorted(reference, key=order):
        truth = int(reference[(model, index)])
        rng = random.Random(f"judgekit creation_mmbench human ratings:{seed}:{model}:{index}")
        row: dict[str, object] = {"index": index, "model": model}
        for column, spread, leniency in HUMAN_RATERS:
            row[column] = min(2, max(-2, round(truth + leniency + rng.gauss(0.0, spread))))
        row[_REFERENCE_COLUMN] = truth
        rows.append(row)
    return rows


def write_human_ratings(path: str | Path, reference: Mapping[tuple[str, str], int], seed: int = 0) -> Path:
    """Write :func:`human_ratings` as the CSV :func:`~.ratings.read_human_ratings` reads."""
    out = Path(path)
    out.parent.mkdir(parents=True, exist_ok=True)
    columns = ["index", "model", *(c for c, _, _ in HUMAN_RATERS), _REFERENCE_COLUMN]
    with out.open("w", encoding="utf-8", newline="") as fh:
        w = csv.DictWriter(fh, fieldnames=columns, lineterminator="\n")
        w.writeheader()
        w.writerows(human_ratings(reference, seed))
    return out


#: the runner whose candidates ``quickstart_human_labels.csv`` rates
QUICKSTART_RUNNER = "quickstart"


def human_labels(reference: Mapping[tuple[str, str], int], seed: int = 0) -> list[dict[str, object]]:
    """:func:`human_ratings`' made-up ratings in the judging core's long format (one row per
    rating: ``item, candidate, rater, score``), for ``options.human_labels``."""
    return [{"item": r["index"], "candidate": r["model"], "rater": column, "score": r[column]}
            for r in human_ratings(reference, seed) for column, _, _ in HUMAN_RATERS]


def write_human_labels(path: str | Path, reference: Mapping[tuple[str, str], int], seed: int = 0) -> Path:
    """Write :func:`human_labels` as the CSV :func:`judgekit.judging.human_agreement.load_human_labels` reads."""
    out = Path(path)
    out.parent.mkdir(parents=True, exist_ok=True)
    with out.open("w", encoding="utf-8", newline="") as fh:
        w = csv.DictWriter(fh, fieldnames=["item", "candidate", "rater", "score"], lineterminator="\n")
        w.writeheader()
        w.writerows(human_labels(reference, seed))
    return out


def read_reference(path: str | Path) -> dict[tuple[str, str], int]:
    """The ``sim_reference`` verdicts of a ratings file written by :func:`write_human_ratings`."""
    with Path(path).open(encoding="utf-8", newline="") as fh:
        return {(r["model"], r["index"]): int(r[_REFERENCE_COLUMN]) for r in csv.DictReader(fh)}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(
        prog="python data/build/creation_mmbench_sample.py",
        description="Write the 12-row synthetic Creation-MMBench sample TSV (and its parquet, and made-up "
                    "human ratings).",
    )
    ap.add_argument("out", nargs="?", help="where to write the .tsv")
    ap.add_argument("--parquet", help="also write the same rows as the Hugging Face parquet here")
    ap.add_argument("--seed", type=int, default=0, help="seed for the small random details of the drawings "
                    "(and of the made-up raters)")
    ap.add_argument("--human-ratings", metavar="CSV", help="write made-up human ratings of the shipped sample's "
                    f"Table 4 runner ({HUMAN_RATINGS_RUNNER}) here: runs its candidates with a noiseless judge")
    args = ap.parse_args(argv)
    if args.human_ratings:
        hr = write_human_ratings(args.human_ratings, reference_verdicts(), seed=args.seed)
        print(f"wrote {hr} ({hr.stat().st_size:,} bytes)")
    if not args.out:
        if not args.human_ratings:
            ap.error("give OUT.tsv, --human-ratings CSV, or both")
        return 0
    path = write_sample(args.out, seed=args.seed)
    print(f"wrote {path} ({path.stat().st_size:,} bytes)")
    if args.parquet:
        pq = write_sample_parquet(path, args.parquet)
        print(f"wrote {pq} ({pq.stat().st_size:,} bytes)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
