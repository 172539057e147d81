"""PNG text chunks: how judgekit's simulator "sees" the sample's images.

Every PNG of the shipped samples carries tEXt chunks saying what it shows.  GuessBench's:
``judgekit-label`` (the concept), ``judgekit-kind`` (``build`` or ``photo``) and, for builds,
``judgekit-stage`` (``1``..``3``); MMGenBench's and MMIE's: ``judgekit-scene`` (the drawn scene as
JSON, :mod:`judgekit.sim.scenes`).  Real models never see them; the simulator reads them with
:func:`read_png_text`, which walks the chunk structure with ``struct`` (no Pillow: the simulator
calls it for every image it receives).
"""

from __future__ import annotations

import io
import struct
import zlib
from typing import Iterable

__all__ = ["LABEL_KEY", "STAGE_KEY", "KIND_KEY", "SCENE_KEY", "read_png_text", "png_with_text"]

LABEL_KEY = "judgekit-label"
STAGE_KEY = "judgekit-stage"
KIND_KEY = "judgekit-kind"
SCENE_KEY = "judgekit-scene"

_PNG_SIG = b"\x89PNG\r\n\x1a\n"




def read_png_text(data: bytes) -> dict[str, str]:
    """The text chunks (tEXt, zTXt, iTXt) of PNG bytes before the first IDAT, key -> value.

    Walks the chunk structure with :mod:`struct` only (no decoding, no CRC check), so it is cheap
    enough to call on every image a request carries.  Not a PNG, or a truncated one: what could be
    read ({} at worst).
    """
    if data[:8] != _PNG_SIG:
        return {}
    out: dict[str, str] = {}
    pos, end = 8, len(data)
    while pos + 8 <= end:
        length, ctype = struct.unpack_from(">I4s", data, pos)
        start = pos + 8
        stop = start + length
        if ctype == b"IDAT" or stop > end:  # the pixels, or a chunk whose data is cut short
            break
        if ctype in (b"tEXt", b"zTXt", b"iTXt"):
            item = _text_chunk(ctype, data[start:stop])
            if item is not None:
                out[item[0]] = item[1]
        elif ctype == b"IEND":
            break
        pos = stop + 4  # skip the CRC
    return out


def _text_chunk(ctype: bytes, body: bytes) -> tuple[str, str] | None:
    key, sep, rest = body.partition(b"\0")
    if not sep:
        return None
    try:
        if ctype == b"tEXt":
            return key.decode("latin-1"), rest.decode("latin-1")
        if ctype == b"zTXt":  # compression method byte, then zlib data
            return key.decode("latin-1"), zlib.decompress(rest[1:]).decode("latin-1")
        # iTXt: compression flag, method, language tag \0, translated keyword \0, text (UTF-8)
        flag = rest[0]
        _lang, _, rest = rest[2:].partition(b"\0")
        _tkey, _, text = rest.partition(b"\0")
        if flag:
            text = zlib.decompress(text)
        return key.decode("latin-1"), text.decode("utf-8")
    except (zlib.error, UnicodeDecodeError, IndexError):
        return None


def png_with_text(im, text: Iterable[tuple[str, str]]) -> bytes:
    """A Pillow image as PNG bytes carrying ``text`` as tEXt chunks (no timestamp: same bytes every run)."""
    from PIL import PngImagePlugin

    info = PngImagePlugin.PngInfo()
    for key, value in text:
        info.add_text(key, value)
    buf = io.BytesIO()
    im.save(buf, format="PNG", pnginfo=info, optimize=True)  # no tIME chunk: same bytes every run
    return buf.getvalue()
