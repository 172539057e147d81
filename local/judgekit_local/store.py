"""The content-addressed blob store the worker shares with the core (PROTOCOL.md).

A blob lives at ``<root>/<first 2 hex of sha256>/<sha256><ext>``. Writes go to a ``*.tmp`` file
in the blob's folder and are renamed into place (atomic on POSIX and Windows), so a reader never
sees half a file. This is a deliberately small twin of ``judgekit.blobs``: the worker may live in
an environment without the core, so it must not import it.
"""

from __future__ import annotations

import hashlib
import os
import re
import tempfile
from pathlib import Path

__all__ = ["BlobMissing", "Store"]

_SHA256 = re.compile(r"[0-9a-f]{64}")


class BlobMissing(KeyError):
    """No blob with that hash in the store (or the hash is not a sha256)."""

    def __str__(self) -> str:
        return str(self.args[0]) if self.args else "blob missing"


class Store:
    """Read blobs by sha256, put bytes and get their sha256."""

    def __init__(self, root: str | os.PathLike[str]) -> None:
        self.root = Path(root)

    def path(self, sha256: str) -> Path:
        """The file holding a blob; raises :class:`BlobMissing` when there is none."""
        if not isinstance(sha256, str) or not _SHA256.fullmatch(sha256):
            raise BlobMissing(f"not a sha256: {sha256!r}")
        folder = self.root / sha256[:2]
        if folder.is_dir():
            for p in folder.glob(sha256 + "*"):
                if not p.name.endswith(".tmp"):
                    return p
        raise BlobMissing(f"no blob {sha256[:12]}... in {self.root}")

    def read(self, sha256: str) -> bytes:
        return self.path(sha256).read_bytes()

    def put(self, data: bytes, ext: str) -> str:
        """Store ``data`` once under ``<sha256><ext>`` (``ext`` like ``".png"``); return the sha256."""
        sha = hashlib.sha256(data).hexdigest()
        try:
            self.path(sha)
            return sha
        except BlobMissing:
            pass
        folder = self.root / sha[:2]
        folder.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=folder, prefix=sha[:8], suffix=".tmp")
        try:
            with os.fdopen(fd, "wb") as f:
                f.write(data)
            os.replace(tmp, folder / (sha + ext))
        except BaseException:
            try:
                os.unlink(tmp)
            except OSError:
                pass
            raise
        return sha
