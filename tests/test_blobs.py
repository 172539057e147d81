"""The content-addressed image store."""

import hashlib
import threading

import pytest

from judgekit.blobs import BlobMissing, BlobStore, sniff_mime

PNG = b"\x89PNG\r\n\x1a\n" + b"\x00" * 32


def test_put_get_by_content_hash(tmp_path):
    store = BlobStore(tmp_path / "blobs")
    sha = store.put(PNG)
    assert sha == hashlib.sha256(PNG).hexdigest()
    assert store.get(sha) == PNG and store.has(sha) and store.mime(sha) == "image/png"
    p = store.path(sha)
    assert p.parent.name == sha[:2] and p.name == sha + ".png"
    assert store.put(PNG) == sha  # stored once
    assert len(list((tmp_path / "blobs").rglob("*"))) == 2  # the folder and the file


def test_missing_blob_is_a_clear_error(tmp_path):
    store = BlobStore(tmp_path)
    with pytest.raises(BlobMissing, match="no blob 000000000000"):
        store.get("0" * 64)
    assert not store.has("0" * 64)


def test_concurrent_writers_of_the_same_bytes(tmp_path):
    store = BlobStore(tmp_path)
    data = b"\xff\xd8\xff" + bytes(range(256)) * 100
    shas = []
    threads = [threading.Thread(target=lambda: shas.append(store.put(data))) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(set(shas)) == 1 and store.get(shas[0]) == data
    assert not list(tmp_path.rglob("*.tmp"))


def test_sniff_mime():
    assert sniff_mime(PNG) == "image/png"
    assert sniff_mime(b"\xff\xd8\xff\xe0") == "image/jpeg"
    assert sniff_mime(b"RIFF\x00\x00\x00\x00WEBPVP8 ") == "image/webp"
    assert sniff_mime(b"GIF89a...") == "image/gif"
    assert sniff_mime(b"<html>") is None
