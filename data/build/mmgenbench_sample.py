"""The shipped MMGenBench sample: 36 synthetic images in MMGenBench-Test's layout, and small
TSVs in the released layout of MMGenBench-Test and MMGenBench-Domain.

None of it comes from the real benchmark.  Each image is a simple scene (:mod:`judgekit.sim.scenes`:
shapes of named colours and sizes on a 3 x 3 grid, a background, maybe a ground band, a word, a
painted or outline style) drawn by Pillow at 256 x 256.  Image ``i`` is
``random_scene(Random("mmgenbench-sample-<i>"), LEAD_ORDER[i % 13])``, so every one of the 13
patterns leads some images; its labels are :func:`~judgekit.sim.scenes.scene_patterns` of its
scene (multi-label, as in the real set).  Every PNG carries its scene as JSON in the
``judgekit-scene`` tEXt chunk, which the simulator reads to "see" it; real models ignore it.

The Domain TSV's images are scenes of their own: ``random_scene(Random("mmgenbench-domain-<i>"),
LEAD_ORDER[i % 13])``.

Files::

    images/0.png ... images/35.png      the images (index = file stem)
    labels.json                         {"Artistic": [indices...], ...}: the real label-index format
    MMGenBench-Test.tsv                 images 0-7 as released: index, image (base64 PNG)
    MMGenBench-Test-label-index.json    their patterns, in the released label-index format
    MMGenBench-Domain.tsv               4 other images as released (no labels)
    README.md

Everything is seeded and PNGs are written without timestamps, so a run gives the same bytes.

    python data/build/mmgenbench_sample.py [OUT_DIR]     # default: data/mmgenbench beside this folder
"""

from __future__ import annotations

import argparse
import base64
import json
import random
from pathlib import Path

from judgekit.sim.scenes import PATTERNS, Scene, random_scene, render, scene_patterns

__all__ = ["N_IMAGES", "TSV_ROWS", "DOMAIN_ROWS", "IMAGE_SIZE", "LEAD_ORDER", "TEST_TSV", "TEST_LABELS", "DOMAIN_TSV",
           "sample_scene", "domain_scene", "write_sample", "main"]

N_IMAGES = 36
#: images 0 .. TSV_ROWS - 1 are written to the Test TSV too
TSV_ROWS = 8
#: rows of the Domain TSV
DOMAIN_ROWS = 4
TEST_TSV = "MMGenBench-Test.tsv"
TEST_LABELS = "MMGenBench-Test-label-index.json"
DOMAIN_TSV = "MMGenBench-Domain.tsv"
IMAGE_SIZE = 256
_MIN_PER_PATTERN = 3

_README = """\
# MMGenBench sample (synthetic)

Made by judgekit, not taken from MMGenBench: {n} images in the layout of MMGenBench-Test, each a
simple scene (coloured shapes on a 3 x 3 grid, a background, sometimes a ground band, a word, a
painted or outline style) drawn with Pillow at {size} x {size}.

- `images/<index>.png`: the images; the index is the file stem.
- `labels.json`: MMGenBench-Test's label-index format, pattern name -> sorted image indices, for
  the 13 patterns ({patterns}).  Images are multi-label: each one is drawn to show one
  pattern and is labelled with every pattern its scene shows (`judgekit.sim.scenes.scene_patterns`).
- `MMGenBench-Test.tsv` and `MMGenBench-Test-label-index.json`: images 0-{last} in the layout
  MMGenBench is released in: a VLMEvalKit TSV (tab-separated, header row) with `index` and `image`
  (base64 PNG), and their label index (all 13 patterns; a pattern none of them shows has `[]`).
- `MMGenBench-Domain.tsv`: {domain} other scenes in the layout of MMGenBench-Domain (no labels).

Every PNG carries its scene as JSON in the tEXt chunk `judgekit-scene`, which judgekit's
simulator reads to caption it (and its image generator to draw a caption back); real models
ignore it.

Regenerate (same bytes every time):

    python data/build/mmgenbench_sample.py data/mmgenbench
"""


#: the pattern image ``i`` is drawn to show is ``LEAD_ORDER[i % 13]``: 36 images give the first ten
#: three images each and the last three two, so those are patterns that other scenes show often too
LEAD_ORDER: tuple[str, ...] = ("Artistic", "Surreal", "Natural", "Contextual", "Technology", "Text", "Geometry",
                               "Count", "Motion", "Orientation", "Color", "Position", "Symbol")


def sample_scene(index: int) -> Scene:
    """The scene of image ``index``: drawn to show pattern ``LEAD_ORDER[index % 13]``."""
    return random_scene(random.Random(f"mmgenbench-sample-{index}"), LEAD_ORDER[index % len(LEAD_ORDER)])


def domain_scene(index: int) -> Scene:
    """The scene of row ``index`` of the Domain TSV."""
    return random_scene(random.Random(f"mmgenbench-domain-{index}"), LEAD_ORDER[index % len(LEAD_ORDER)])


def _label_json(labels: dict[str, list[int]]) -> bytes:
    body = ",\n".join(f"  {json.dumps(p)}: {json.dumps(idx)}" for p, idx in labels.items())
    return ("{\n" + body + "\n}\n").encode("utf-8")


def _tsv(rows: list[tuple[int, bytes]]) -> bytes:
    lines = ["index\timage"] + [f"{i}\t{base64.b64encode(png).decode('ascii')}" for i, png in rows]
    return ("\n".join(lines) + "\n").encode("ascii")


def _write(path: Path, data: bytes) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)


def write_sample(out_dir: str | Path) -> Path:
    """Write the sample into ``out_dir`` (created if needed; files of the same names are replaced)."""
    out = Path(out_dir)
    labels: dict[str, list[int]] = {p: [] for p in PATTERNS}
    rows: list[tuple[int, bytes]] = []
    for i in range(N_IMAGES):
        scene = sample_scene(i)
        png = render(scene, IMAGE_SIZE, seed=i, label=True)
        _write(out / "images" / f"{i}.png", png)
        shown = scene_patterns(scene)
        for p in PATTERNS:
            if p in shown:
                labels[p].append(i)
        if i < TSV_ROWS:
            rows.append((i, png))
    thin = [p for p, idx in labels.items() if len(idx) < _MIN_PER_PATTERN]
    if thin:  # a change to the scene generator must keep every pattern represented
        raise AssertionError(f"patterns with fewer than {_MIN_PER_PATTERN} images: {thin}")
    _write(out / "labels.json", _label_json(labels))
    _write(out / TEST_TSV, _tsv(rows))
    _write(out / TEST_LABELS, _label_json({p: [i for i in idx if i < TSV_ROWS] for p, idx in labels.items()}))
    domain = [(i, render(domain_scene(i), IMAGE_SIZE, seed=N_IMAGES + i, label=True)) for i in range(DOMAIN_ROWS)]
    _write(out / DOMAIN_TSV, _tsv(domain))
    readme = _README.format(n=N_IMAGES, size=IMAGE_SIZE, patterns=", ".join(PATTERNS), last=TSV_ROWS - 1,
                            domain=DOMAIN_ROWS)
    _write(out / "README.md", readme.encode("utf-8"))
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(
        prog="python data/build/mmgenbench_sample.py",
        description=f"Write the synthetic MMGenBench sample: {N_IMAGES} labelled scene images, labels.json, "
                    f"and {TEST_TSV}, {TEST_LABELS} and {DOMAIN_TSV} in the released layout.",
    )
    ap.add_argument("out_dir", nargs="?", default=str(Path(__file__).resolve().parents[1] / "mmgenbench"), help="where to write (default: %(default)s)")
    args = ap.parse_args(argv)
    out = write_sample(args.out_dir)
    files = [p for p in out.rglob("*") if p.is_file()]
    print(f"wrote {out} ({len(files)} files, {sum(p.stat().st_size for p in files):,} bytes)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
