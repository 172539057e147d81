"""The shipped MMGenBench sample: 36 synthetic images in MMGenBench-Test's layout.

None of it comes from the real benchmark.  Each image is a simple scene (:mod:`judgekit.sim.scenes`:
shapes of named colours and sizes on a 3 x 3 grid, a background, maybe a ground band, a word, a
painted or outline style) drawn by Pillow at 256 x 256.  Image ``i`` is
``random_scene(Random("mmgenbench-sample-<i>"), LEAD_ORDER[i % 13])``, so every one of the 13
patterns leads some images; its labels are :func:`~judgekit.sim.scenes.scene_patterns` of its
scene (multi-label, as in the real set).  Every PNG carries its scene as JSON in the
``judgekit-scene`` tEXt chunk, which the simulator reads to "see" it; real models ignore it.

Files::

    images/0.png ... images/35.png   the images (index = file stem)
    labels.json                      {"Artistic": [indices...], ...}: the real label-index format
    sample.tsv                       images 0-7 as a VLMEvalKit-style TSV: index, image (base64 PNG),
                                     patterns (comma-separated)
    README.md

Everything is seeded and PNGs are written without timestamps, so a run gives the same bytes.

    python -m judgekit.benchmarks.mmgenbench.sample [OUT_DIR]     # default data/mmgenbench
"""

from __future__ import annotations

import argparse
import base64
import json
import random
from pathlib import Path

from ...sim.scenes import PATTERNS, Scene, random_scene, render, scene_patterns

__all__ = ["N_IMAGES", "TSV_ROWS", "IMAGE_SIZE", "LEAD_ORDER", "sample_scene", "write_sample", "main"]

N_IMAGES = 36
#: images written to sample.tsv too
TSV_ROWS = 8
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
- `sample.tsv`: images 0-{last} as a VLMEvalKit-style TSV (tab-separated, header row): `index`,
  `image` (base64 PNG), `patterns` (comma-separated pattern names).

Every PNG carries its scene as JSON in the tEXt chunk `judgekit-scene`, which judgekit's
simulator reads to caption it (and its image generator to draw a caption back); real models
ignore it.

Regenerate (same bytes every time):

    python -m judgekit.benchmarks.mmgenbench.sample data/mmgenbench
"""


#: the pattern image ``i`` is drawn to show is ``LEAD_ORDER[i % 13]``: 36 images give the first ten
#: three images each and the last three two, so those are patterns that other scenes show often too
LEAD_ORDER: tuple[str, ...] = ("Artistic", "Surreal", "Natural", "Contextual", "Technology", "Text", "Geometry",
                               "Count", "Motion", "Orientation", "Color", "Position", "Symbol")


def sample_scene(index: int) -> Scene:
    """The scene of image ``index``: drawn to show pattern ``LEAD_ORDER[index % 13]``."""
    return random_scene(random.Random(f"mmgenbench-sample-{index}"), LEAD_ORDER[index % len(LEAD_ORDER)])


def _write(path: Path, data: bytes) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)


def write_sample(out_dir: str | Path) -> Path:
    """Write the sample into ``out_dir`` (created if needed; files of the same names are replaced)."""
    out = Path(out_dir)
    labels: dict[str, list[int]] = {p: [] for p in PATTERNS}
    rows = ["index\timage\tpatterns"]
    for i in range(N_IMAGES):
        scene = sample_scene(i)
        png = render(scene, IMAGE_SIZE, seed=i, label=True)
        _write(out / "images" / f"{i}.png", png)
        shown = scene_patterns(scene)
        for p in PATTERNS:
            if p in shown:
                labels[p].append(i)
        if i < TSV_ROWS:
            names = ",".join(p for p in PATTERNS if p in shown)
            rows.append(f"{i}\t{base64.b64encode(png).decode('ascii')}\t{names}")
    thin = [p for p, idx in labels.items() if len(idx) < _MIN_PER_PATTERN]
    if thin:  # a change to the scene generator must keep every pattern represented
        raise AssertionError(f"patterns with fewer than {_MIN_PER_PATTERN} images: {thin}")
    body = ",\n".join(f"  {json.dumps(p)}: {json.dumps(idx)}" for p, idx in labels.items())
    _write(out / "labels.json", ("{\n" + body + "\n}\n").encode("utf-8"))
    _write(out / "sample.tsv", ("\n".join(rows) + "\n").encode("ascii"))
    readme = _README.format(n=N_IMAGES, size=IMAGE_SIZE, patterns=", ".join(PATTERNS), last=TSV_ROWS - 1)
    _write(out / "README.md", readme.encode("utf-8"))
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(
        prog="python -m judgekit.benchmarks.mmgenbench.sample",
        description=f"Write the synthetic MMGenBench sample: {N_IMAGES} labelled scene images, labels.json "
                    f"and sample.tsv.",
    )
    ap.add_argument("out_dir", nargs="?", default="data/mmgenbench", help="where to write (default: %(default)s)")
    args = ap.parse_args(argv)
    out = write_sample(args.out_dir)
    files = [p for p in out.rglob("*") if p.is_file()]
    print(f"wrote {out} ({len(files)} files, {sum(p.stat().st_size for p in files):,} bytes)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
