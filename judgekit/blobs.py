"""A content-addressed file store for images (retrieved, generated, encoded).

A blob lives at ``<root>/<first 2 hex of sha256>/<sha256><ext>``; its name is its content hash,
so the same bytes are stored once, a file's name proves its content, and two processes (the
core and a local worker, say) can share the folder without coordination: writes go to a
temporary file in the same folder and are renamed into place, which is atomic on POSIX and
Windows, so a reader never sees half a file.

Messages and cache rows refer to blobs by sha256; bytes never travel as base64 inside them.
"""

from __future__ import annotations

import hashlib
import os
import tempfile
from pathlib import Path

__all__ = ["BlobStore", "BlobMissing", "EXT_BY_MIME", "MIME_BY_EXT", "sniff_mime"]

EXT_BY_MIME = {
    "image/png": ".png",
    "image/jpeg": ".jpg",
    "image/webp": ".webp",
    "image/gif": ".gif",
    "image/bmp": ".bmp",
    "application/octet-stream": ".bin",
    "application/x-npy": ".npy",
}
MIME_BY_EXT = {v: k for k, v in EXT_BY_MIME.items()} | {".jpeg": "image/jpeg"}


class BlobMissing(KeyError):
    """No blob with that hash in the store."""

    def __str__(self) -> str:  # KeyError quotes its argument; this is a message
        return str(self.args[0]) if self.args else "blob missing"


def sniff_mime(data: bytes) -> str | None:
    """The image type from the first bytes, or None when they are not an image we know."""
    if data[:8] == b"\x89PNG\r\n\x1a\n":
        return "image/png"
    if data[:3] == b"\xff\xd8\xff":
        return "image/jpeg"
    if data[:4] == b"RIFF" and data[8:12] == b"WEBP":
        return "image/webp"
    if data[:6] in (b"GIF87a", b"GIF89a"):
        return "image/gif"
    if data[:2] == b"BM":
        return "image/bmp"
    return None


class BlobStore:
    """Put bytes, get them back by sha256."""

    def __init__(self, root: str | os.PathLike[str]) -> None:
        self.root = Path(root)

    def _dir(self, sha256: str) -> Path:
        return self.root / sha256[:2]

    def path(self, sha256: str) -> Path:
        """The file of a stored blob; raises BlobMissing when there is none."""
        d = self._dir(sha256)
        if d.is_dir():
            for p in d.glob(sha256 + "*"):
                if not p.name.endswith(".tmp"):
                    return p
        raise BlobMissing(f"no blob {sha256[:12]}... in {self.root}")

    def has(self, sha256: str) -> bool:
        try:
            self.path(sha256)
            return True
        except BlobMissing:
            return False

    def put(self, data: bytes, mime: str | None = None) -> str:
        """Store ``data`` (once) and return its sha256."""
        sha = hashlib.sha256(data).hexdigest()
        if self.has(sha):
            return sha
        mime = mime or sniff_mime(data) or "application/octet-stream"
        d = self._dir(sha)
        d.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=d, prefix=sha[:8], suffix=".tmp")
        try:
            with os.fdopen(fd, "wb") as f:
                f.write(data)
            os.replace(tmp, d / (sha + EXT_BY_MIME.get(mime, ".bin")))
        except BaseException:
            try:
                os.unlink(tmp)
            except OSError:
                pass
            raise
        return sha

    def get(self, sha256: str) -> bytes:
        return self.path(sha256).read_bytes()

    def mime(self, sha256: str) -> str:
        return MIME_BY_EXT.get(self.path(sha256).suffix, "application/octet-stream")
