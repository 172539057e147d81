"""The reference's JPEG round trip of a generated image, before it is encoded.

MMGenBench's ``generate/run.py`` saves every generated image with Pillow as JPEG at Pillow's
defaults (quality 75, 4:2:0 chroma subsampling) into its output TSV, and ``evalimg/run.py``
encodes the decoded JPEG.  :func:`reference_jpeg` does the same to the generator's image (an
image JPEG cannot hold, RGBA or palette, is made RGB first; diffusers pipelines return RGB).

The conversion takes about 40 ms for a 1024 x 1024 image, so an estimate over a finished run
would spend minutes redoing it.  :class:`JpegCopies` keeps each copy in the blob store beside the
original and remembers which copy belongs to which original in ``<blobs>/derived/jpeg-q75/``
(one small file per original, named by its sha256, holding the copy's sha256).  A memo whose
copy is gone is made again; a store that cannot be written to only loses the memo.
"""

from __future__ import annotations

import io
import os
from pathlib import Path

from ...blobs import BlobStore
from ...types import ImagePart

__all__ = ["reference_jpeg", "JpegCopies"]

_MEMO_DIR = ("derived", "jpeg-q75")


def reference_jpeg(data: bytes) -> bytes:
    """``data`` (any image Pillow reads) saved as Pillow saves a JPEG by default."""
    from PIL import Image

    with Image.open(io.BytesIO(data)) as im:
        im.load()
        img = im if im.mode in ("RGB", "L", "CMYK") else im.convert("RGB")
        buf = io.BytesIO()
        img.save(buf, format="JPEG")
    return buf.getvalue()


class JpegCopies:
    """JPEG copies of stored images, made once per original."""

    def __init__(self, blobs: BlobStore) -> None:
        self.blobs = blobs
        self.memo = Path(blobs.root, *_MEMO_DIR)

    def copy_of(self, original: ImagePart) -> ImagePart:
        """The JPEG copy of ``original`` (blocking: call it in a thread)."""
        memo = self.memo / original.sha256
        try:
            sha = memo.read_text(encoding="ascii").strip()
            return ImagePart(self.blobs.get(sha), "image/jpeg", sha256=sha)
        except (OSError, KeyError, ValueError):
            pass  # no memo yet, or its copy is gone
        data = reference_jpeg(original.data)
        try:
            sha = self.blobs.put(data, "image/jpeg")
            self.memo.mkdir(parents=True, exist_ok=True)
            tmp = memo.with_name(f"{memo.name}.{os.urandom(6).hex()}.tmp")
            tmp.write_text(sha, encoding="ascii")
            os.replace(tmp, memo)  # atomic: a reader never sees half a memo
        except OSError:  # a store we cannot write to (an estimate on a read-only copy): not kept
            return ImagePart(data, "image/jpeg")
        return ImagePart(data, "image/jpeg", sha256=sha)
