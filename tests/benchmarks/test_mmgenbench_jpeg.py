"""The reference encodes generated images after saving them as Pillow's default JPEG
(lerogo/MMGenBench generate/run.py: image.save(buffer, format="JPEG")); judgekit does the same,
once per image."""

from __future__ import annotations

import io

import numpy as np
from PIL import Image

from judgekit.benchmarks.mmgenbench.jpeg import JpegCopies, reference_jpeg
from judgekit.blobs import BlobStore
from judgekit.types import ImagePart


def _png(mode: str = "RGB", size=(48, 40)) -> bytes:
    rng = np.random.default_rng(3)
    channels = {"RGB": 3, "RGBA": 4}[mode]
    im = Image.fromarray(rng.integers(0, 256, (size[1], size[0], channels), dtype=np.uint8), mode)
    buf = io.BytesIO()
    im.save(buf, format="PNG")
    return buf.getvalue()


def test_the_copy_is_pillows_default_jpeg_of_the_image():
    png = _png()
    with Image.open(io.BytesIO(png)) as im:
        buf = io.BytesIO()
        im.save(buf, format="JPEG")  # what the reference writes
    assert reference_jpeg(png) == buf.getvalue()
    with Image.open(io.BytesIO(reference_jpeg(png))) as back:
        assert back.format == "JPEG" and back.size == (48, 40) and back.mode == "RGB"
    # an RGBA image (an images API's PNG) goes through RGB first
    with Image.open(io.BytesIO(reference_jpeg(_png("RGBA")))) as back:
        assert back.mode == "RGB"


def test_copies_are_made_once_and_remade_when_gone(tmp_path, monkeypatch):
    blobs = BlobStore(tmp_path / "blobs")
    original = ImagePart(_png(), "image/png")
    first = JpegCopies(blobs).copy_of(original)
    assert first.mime == "image/jpeg" and blobs.get(first.sha256) == first.data == reference_jpeg(original.data)
    assert (blobs.root / "derived" / "jpeg-q75" / original.sha256).read_text() == first.sha256

    import judgekit.benchmarks.mmgenbench.jpeg as mod

    def no_conversion(data):
        raise AssertionError("converted again")

    monkeypatch.setattr(mod, "reference_jpeg", no_conversion)
    again = JpegCopies(blobs).copy_of(original)  # a new process: the memo in the store answers
    assert (again.sha256, again.data) == (first.sha256, first.data)

    monkeypatch.undo()
    blobs.path(first.sha256).unlink()  # the copy is gone: made again, same bytes
    remade = JpegCopies(blobs).copy_of(original)
    assert remade.sha256 == first.sha256 and blobs.has(first.sha256)
