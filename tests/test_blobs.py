"""The content-addressed image store."""

import hashlib
import threading

import pytest

from judgekit.blobs import BlobMissing, BlobStore, missing_output, sniff_mime

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


def test_a_missing_blob_names_its_file_and_the_rerun_that_makes_it(tmp_path):
    store = BlobStore(tmp_path)
    sha = store.put(PNG)
    store.path(sha).unlink()
    with pytest.raises(BlobMissing) as err:
        store.get(sha, "image/png")
    file = str(tmp_path / sha[:2] / f"{sha}.png")
    assert err.value.sha256 == sha and err.value.file == file and file in str(err.value)
    with pytest.raises(BlobMissing) as unknown:  # its type unknown: any extension
        store.path(sha)
    assert unknown.value.file == str(tmp_path / sha[:2] / f"{sha}.*")
    message = missing_output(err.value, "the generated image")
    assert message.startswith(f"the generated image {file} is missing from the image store")
    assert message.endswith("re-run the same command to make it again")
    assert missing_output("ab" * 32, "the retrieved image").startswith(f"the retrieved image {'ab' * 32} is missing")


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
