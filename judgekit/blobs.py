"""A content-addressed file store for images (retrieved, generated, encoded).

A blob lives at ``<root>/<first 2 hex of sha256>/<sha256><ext>``; its name is its content hash,
so the same bytes are stored once, a file's name proves its content, and two processes (the
core and a local worker, say) can share the folder without coordination: writes go to a
temporary file in the same folder and are renamed into place, which is atomic on POSIX and
Windows, so a reader never sees half a file.

Messages and cache rows refer to blobs by sha256; bytes never travel as base64 inside them.
A cached reply that names a file its provider made (a drawn image, an encoding, a retrieved
image) is served only while that file is here: the engine makes the call again when it is gone
(:meth:`judgekit.providers.base.Provider.output_blobs`), and a consumer that still meets a missing
file says so with :func:`missing_output` (naming the file, and that a rerun makes it again).

Lookups are O(1): a blob's file is found by trying its exact name with each known extension
(``_EXTENSIONS``, most likely first; a stat or an open each), never by listing its folder.
Only when none of them exists is the folder scanned once for ``<sha256>*`` (a blob another
writer stored under an extension of its own). ``put`` checks the known names only: bytes some
other writer stored under an extension of its own are stored once more (same content, same hash).
"""

from __future__ import annotations

import hashlib
import os
from pathlib import Path
from typing import Callable

from .errors import ReplyNotStored, storage_problem

__all__ = ["BlobStore", "BlobMissing", "EXT_BY_MIME", "MIME_BY_EXT", "sniff_mime", "missing_output"]

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

# Every extension this store or a local worker (``judgekit_local.store``, whose vectors are
# ``.f32``) writes, most likely first.
_EXTENSIONS = (".png", ".f32", ".jpg", ".webp", ".jpeg", ".gif", ".bmp", ".bin", ".npy")

# Does a name exist: os.access is one syscall and raises nothing (os.path.isfile costs twice as
# much, most of it the exception of a miss).
_exists, _F_OK = os.access, os.F_OK

# A new file gets O_EXCL (never clobbers another writer's temporary file) and mode 0o600, as
# tempfile.mkstemp would, without mkstemp's per-call name generator.
_TMP_FLAGS = (os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_BINARY", 0)
              | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NOINHERIT", 0))


class BlobMissing(KeyError):
    """No blob with that hash in the store.  ``sha256``: the blob; ``file``: the file it would be
    (``<root>/<first 2 hex>/<sha256><ext>``, ``.*`` for the extension when its type is not known)."""

    def __init__(self, message: str, sha256: str = "", file: str = "") -> None:
        super().__init__(message)
        self.sha256, self.file = sha256, file

    def __str__(self) -> str:  # KeyError quotes its argument; this is a message
        return str(self.args[0]) if self.args else "blob missing"


def missing_output(missing: BlobMissing | str, what: str) -> str:
    """The failure of an item whose ``what`` ("the generated image", "the retrieved image", ...) a
    reply names but the store lacks (``missing``: the BlobMissing raised, or the file or sha256):
    the file, why it may be gone, and that a rerun makes it again (the engine does not serve a
    cached reply whose file is missing)."""
    name = missing if isinstance(missing, str) else (missing.file or missing.sha256 or str(missing))
    return (f"{what} {name} is missing from the image store (deleted since it was made, or written on a "
            "node that does not share the store); re-run the same command to make it again")


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
        self._root = os.fspath(self.root)
        self.write_error: ReplyNotStored | None = None
        """The first write that failed for want of room; None while all is well."""
        self.on_full: Callable[[ReplyNotStored], None] | None = None
        """Called (in the writing thread) at the first write that fails for want of room: a run
        stops launching calls then."""

    def _stem(self, sha256: str) -> str:
        return os.path.join(self._root, sha256[:2], sha256)

    def _find(self, sha256: str) -> str | None:
        stem = self._stem(sha256)
        for ext in _EXTENSIONS:
            if _exists(stem + ext, _F_OK):
                return stem + ext
        try:  # the slow path: an extension not in _EXTENSIONS
            with os.scandir(os.path.dirname(stem)) as entries:
                for entry in entries:
                    if entry.name.startswith(sha256) and not entry.name.endswith(".tmp") and entry.is_file():
                        return entry.path
        except (FileNotFoundError, NotADirectoryError):
            pass
        return None

    def file_of(self, sha256: str, mime: str | None = None) -> str:
        """The file a blob of type ``mime`` is (or would be) stored in; its extension ``.*`` when
        ``mime`` is None or unknown."""
        ext = EXT_BY_MIME.get(mime, ".*") if mime else ".*"
        return self._stem(sha256) + ext

    def path(self, sha256: str, mime: str | None = None) -> Path:
        """The file of a stored blob; raises BlobMissing when there is none (naming the file it
        would be: ``mime``, when known, gives its extension)."""
        found = self._find(sha256)
        if found is None:
            raise BlobMissing(f"no blob {sha256[:12]}... in {self.root} (no file {self.file_of(sha256, mime)})",
                              sha256, self.file_of(sha256, mime))
        return Path(found)

    def has(self, sha256: str) -> bool:
        return self._find(sha256) is not None

    def put(self, data: bytes, mime: str | None = None) -> str:
        """Store ``data`` (once) and return its sha256.

        Bytes already stored under their own or a known extension are not written again."""
        sha = hashlib.sha256(data).hexdigest()
        stem = self._stem(sha)
        mime = mime or sniff_mime(data) or "application/octet-stream"
        ext = EXT_BY_MIME.get(mime, ".bin")
        if _exists(stem + ext, _F_OK) or any(_exists(stem + e, _F_OK) for e in _EXTENSIONS if e != ext):
            return sha
        folder = os.path.dirname(stem)
        made = False
        while True:
            tmp = os.path.join(folder, f"{sha[:8]}{os.urandom(6).hex()}.tmp")
            try:
                fd = os.open(tmp, _TMP_FLAGS, 0o600)
                break
            except FileNotFoundError:
                if made:
                    raise
                os.makedirs(folder, exist_ok=True)  # the folder's first blob
                made = True
            except FileExistsError:  # another writer's name (48 random bits): draw again
                continue
        try:
            try:
                view = memoryview(data)
                while view:
                    view = view[os.write(fd, view):]
            finally:
                os.close(fd)
            os.replace(tmp, stem + ext)
        except BaseException as exc:
            try:
                os.unlink(tmp)
            except OSError:
                pass
            why = storage_problem(exc)
            if why is not None:  # a full disk: one error naming the store (os.write names no file)
                err = ReplyNotStored(str(self.root), why)
                if self.write_error is None:
                    self.write_error = err
                    if self.on_full is not None:
                        self.on_full(err)
                raise err from None
            raise
        return sha

    def get(self, sha256: str, mime: str | None = None) -> bytes:
        """The bytes of a stored blob; raises BlobMissing (see :meth:`path`) when there is none."""
        stem = self._stem(sha256)
        # Open the candidates directly (a miss is one failed open, no stat), unbuffered (the whole
        # file in one read, no buffer object).
        for ext in _EXTENSIONS:
            try:
                with open(stem + ext, "rb", buffering=0) as f:
                    return f.read()
            except (FileNotFoundError, IsADirectoryError, NotADirectoryError):
                continue
        return self.path(sha256, mime).read_bytes()

    def mime(self, sha256: str) -> str:
        return MIME_BY_EXT.get(self.path(sha256).suffix, "application/octet-stream")
