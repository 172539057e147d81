"""Record the goldens: run every shipped runner offline and write its snapshot.

    PYTHONPATH=. python tests/golden/record.py [RUNNER ...]

Run it on the code whose behaviour is the reference (before a change that must not change it);
``test_golden.py`` then checks the code of the day against these files.  See ``golden.py`` for
what a snapshot keeps and what it masks.
"""

from __future__ import annotations

import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from golden import MAX_GOLDEN_BYTES, RECORDED, SHIPPED, canonical, golden_path, run_runner, snapshot  # noqa: E402


def main(names: list[str]) -> None:
    RECORDED.mkdir(exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="golden-") as tmp:
        for name in names or SHIPPED:
            start = time.perf_counter()
            snap = snapshot(run_runner(name, Path(tmp)))
            text = canonical(snap)
            if len(text) > MAX_GOLDEN_BYTES:
                raise SystemExit(f"{name}: golden of {len(text)} bytes; lower golden.SMALL")
            golden_path(name).write_text(text + "\n", encoding="utf-8")
            print(f"{name}: {len(text):,} bytes, {time.perf_counter() - start:.1f} s", flush=True)


if __name__ == "__main__":
    main(sys.argv[1:])
