"""Write every shipped sample under ``data/`` again (or into another root), byte for byte.

    python data/build/build_all.py [OUT_ROOT] [--only NAME ...]    # default: data/ beside this folder

The scripts in this folder draw and write the shipped samples; they are build tools, not part of
the installed package (judgekit reads the files they wrote, never imports them).  One script per
benchmark, each runnable alone:

``creation_mmbench_sample.py``
    ``creation_mmbench/sample.tsv``, its Hugging Face parquet ``creation_mmbench/data/...``
    and the made-up ``creation_mmbench/human_ratings.csv`` (rows written by hand in
    ``creation_mmbench_rows.json``; the ratings run the Table 4 sample runner against the
    simulator first) and ``creation_mmbench/quickstart_human_labels.csv`` (the same made-up raters
    on the quickstart's candidates, in the ``human_labels`` format);
``guessbench_sample.py`` (with ``guessbench_builds.py``, ``guessbench_photos.py``)
    ``guessbench/``: the ten build sets, the one-shot example, the retrieval photos;
``mmgenbench_sample.py``
    ``mmgenbench/``: 36 scene images, the Test and Domain TSVs, the label indexes;
``mmie_sample.py`` (with ``mmie_pictures.py``)
    ``mmie/``: the rows, the scorer-format answers, the human scores, the pictures.

The pairwise and rubric samples and ``creation_mmbench/README.md`` are written by hand.
``tests/test_sample_build.py`` checks that these scripts reproduce the shipped files.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
if str(HERE) not in sys.path:
    sys.path.insert(0, str(HERE))

#: the data folder these scripts write by default
DATA = HERE.parent
#: the creation sample's Hugging Face parquet, relative to its folder
CREATION_PARQUET = "data/test-00000-of-00001.parquet"


def build_creation_mmbench(out: Path, *, human_ratings: bool = True) -> None:
    import creation_mmbench_sample as c

    tsv = c.write_sample(out / "sample.tsv")
    c.write_sample_parquet(tsv, out / CREATION_PARQUET)
    if human_ratings:
        c.write_human_ratings(out / "human_ratings.csv", c.reference_verdicts())
        c.write_human_labels(out / "quickstart_human_labels.csv", c.reference_verdicts(c.QUICKSTART_RUNNER))


def build_guessbench(out: Path) -> None:
    import guessbench_sample

    guessbench_sample.write_sample(out)


def build_mmgenbench(out: Path) -> None:
    import mmgenbench_sample

    mmgenbench_sample.write_sample(out)


def build_mmie(out: Path) -> None:
    import mmie_sample

    mmie_sample.write_sample(out)


#: benchmark folder -> the function that writes it
BUILDERS = {"creation_mmbench": build_creation_mmbench, "guessbench": build_guessbench,
            "mmgenbench": build_mmgenbench, "mmie": build_mmie}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python data/build/build_all.py", description=__doc__.split("\n\n")[0])
    ap.add_argument("out_root", nargs="?", default=str(DATA), help="where to write (default: %(default)s)")
    ap.add_argument("--only", nargs="+", choices=sorted(BUILDERS), help="only these samples")
    args = ap.parse_args(argv)
    root = Path(args.out_root)
    for name in args.only or BUILDERS:
        BUILDERS[name](root / name)
        print(f"wrote {root / name}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
