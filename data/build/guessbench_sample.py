"""The shipped GuessBench sample: ten build sets drawn here, in the real layout.

None of it comes from the real benchmark.  Each set is a blocky, Minecraft-like build of a
concept drawn with Pillow as front-facing voxels on a sky and a row of grass: ``3.png`` is the
whole build, ``2.png`` about 70% of its blocks and ``1.png`` about 40% (a seeded, mostly
bottom-up build order, so the blocks of 1 are among those of 2, and those of 2 among 3's).
The hints are ``generate_hints(answer, seed=set number)``.  Beside the sets:

``example/``
    the paper's one-shot worked example, "Glass of Milk" (Table 5), whose Hint_3 reveals the
    paper's three letters (l, s, k) and Hint_2 two of them;
``retrieval/``
    one smoother, "photo"-style picture per sample answer and per distractor concept, named by
    its label (``rocking_chair.png``), with ``labels.json`` mapping file name -> label: the
    image folder a local retriever indexes.

Every PNG carries tEXt chunks saying what it shows: ``judgekit-label`` (the concept),
``judgekit-kind`` (``build`` or ``photo``) and, for builds, ``judgekit-stage`` (``1``..``3``).
Real models never see them; judgekit's simulator reads them (:mod:`judgekit.pngtext`) to "see".
Everything is seeded and PNGs are written without timestamps, so a run gives the same bytes.

    python data/build/guessbench_sample.py [OUT_DIR]     # default: data/guessbench beside this folder
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from guessbench_builds import STAGE_FRACTIONS, build_images, stage_cells
from judgekit.benchmarks.guessbench.data import ANSWER_FILE, HINT_FILES, IMAGE_FILES
from judgekit.benchmarks.guessbench.hints import format_hint, generate_hints
from guessbench_photos import photo_bytes, retrieval_file_name
from judgekit.pngtext import KIND_KEY, LABEL_KEY, STAGE_KEY, read_png_text

# the drawings live in builds.py and photos.py, the PNG text chunks in judgekit/pngtext.py; their public
# names are re-exported here
__all__ = ["LABEL_KEY", "STAGE_KEY", "KIND_KEY", "SAMPLE_ANSWERS", "DISTRACTORS", "EXAMPLE_ANSWER",
           "STAGE_FRACTIONS", "read_png_text", "write_sample", "retrieval_file_name", "stage_cells",
           "set_seed_tag", "main"]

#: set number -> answer, in folder order (mixed lengths: six short answers, four long)
SAMPLE_ANSWERS: dict[int, str] = {
    1: "apple", 2: "sword", 3: "pumpkin", 4: "caterpillar", 5: "snowman",
    6: "house", 7: "rocking chair", 8: "fish tank", 9: "lighthouse", 10: "watermelon",
}
#: concepts that only have a retrieval photo (near misses of the answers)
DISTRACTORS = ("pear", "tomato", "orange", "dagger", "castle", "windmill", "ice cream", "umbrella",
               "armchair", "snail")
EXAMPLE_ANSWER = "Glass of Milk"
#: the letters the paper's one-shot Hint_3 reveals: 1st word's 2nd (l), 5th (s), 3rd word's 4th (k)
EXAMPLE_HINT3 = frozenset({(0, 1), (0, 4), (2, 3)})
EXAMPLE_HINT2 = frozenset({(0, 1), (2, 3)})

# --------------------------------------------------------------------------- writing

_README = """\
# GuessBench sample (synthetic)

Made by judgekit, not taken from GuessBench: ten build sets in the benchmark's layout
(`N/1.png 2.png 3.png Hint_1.txt Hint_2.txt Hint_3.txt Answer.txt`), drawn with Pillow as blocky,
Minecraft-like builds; `example/` is the paper's one-shot example (Glass of Milk) and
`retrieval/` the "real photo" stand-ins a local image retriever indexes (`labels.json`).
Every PNG carries tEXt chunks (`judgekit-label`, `judgekit-stage`, `judgekit-kind`) that
judgekit's simulator reads; real models ignore them.

Regenerate (same bytes every time):

    python data/build/guessbench_sample.py data/guessbench
"""


def _write(path: Path, data: bytes) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)


def set_seed_tag(set_id: str) -> str:
    """The tag that seeds a sample set's drawings (``"set-7"``, ``"example"``)."""
    return "example" if set_id == "example" else f"set-{set_id}"


def _write_set(folder: Path, answer: str, hints: tuple[str, str, str], seed_tag: str) -> None:
    for name, data in zip(IMAGE_FILES, build_images(answer, seed_tag)):
        _write(folder / name, data)
    # no final line break, as the released files: the authors' code puts a hint into the prompt as read
    for name, hint in zip(HINT_FILES, hints):
        _write(folder / name, hint.encode("utf-8"))
    _write(folder / ANSWER_FILE, answer.encode("utf-8"))


def write_sample(out_dir: str | Path) -> Path:
    """Write the sample into ``out_dir`` (created if needed; files of the same names are replaced)."""
    out = Path(out_dir)
    for n, answer in SAMPLE_ANSWERS.items():
        _write_set(out / str(n), answer, generate_hints(answer, seed=n), set_seed_tag(str(n)))
    example_hints = (format_hint(EXAMPLE_ANSWER, frozenset()), format_hint(EXAMPLE_ANSWER, EXAMPLE_HINT2),
                     format_hint(EXAMPLE_ANSWER, EXAMPLE_HINT3))
    _write_set(out / "example", EXAMPLE_ANSWER, example_hints, set_seed_tag("example"))
    labels: dict[str, str] = {}
    for label in (*SAMPLE_ANSWERS.values(), *DISTRACTORS):
        name = retrieval_file_name(label)
        _write(out / "retrieval" / name, photo_bytes(label))
        labels[name] = label
    _write(out / "retrieval" / "labels.json",
           (json.dumps(dict(sorted(labels.items())), indent=2) + "\n").encode("utf-8"))
    _write(out / "README.md", _README.encode("utf-8"))
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(
        prog="python data/build/guessbench_sample.py",
        description="Write the synthetic GuessBench sample: 10 build sets, the one-shot example and "
                    "the retrieval images.",
    )
    ap.add_argument("out_dir", nargs="?", default=str(Path(__file__).resolve().parents[1] / "guessbench"),
                    help="where to write (default: %(default)s)")
    args = ap.parse_args(argv)
    out = write_sample(args.out_dir)
    files = [p for p in out.rglob("*") if p.is_file()]
    print(f"wrote {out} ({len(files)} files, {sum(p.stat().st_size for p in files):,} bytes)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
