"""The local image folder retriever."""

from __future__ import annotations

import io
import json
import os

import pytest
from PIL import Image

from judgekit.blobs import BlobStore
from judgekit.config import ModelSpec
from judgekit.errors import BadRequest, SpecError
from judgekit.providers import create_provider
from judgekit.retrieval import ImageFolderRetriever, Retrieved
from judgekit.retrieval.folder import label_from_name, normalise_label, similarity
from judgekit.types import ChatRequest, Message


def write_image(path, colour="red", fmt=None) -> bytes:
    buf = io.BytesIO()
    Image.new("RGB", (8, 8), colour).save(buf, format=fmt or {".jpg": "JPEG", ".webp": "WEBP"}.get(path.suffix, "PNG"))
    path.write_bytes(buf.getvalue())
    return buf.getvalue()


@pytest.fixture
def folder(tmp_path):
    d = tmp_path / "images"
    d.mkdir()
    write_image(d / "rocking_chair_2.png", "red")
    write_image(d / "rocking-chair.jpg", "green")
    write_image(d / "black_cat.webp", "black")
    write_image(d / "Eiffel-Tower-01.png", "gray")
    (d / "notes.txt").write_text("not an image")
    return d


async def started(path, **kw) -> ImageFolderRetriever:
    r = ImageFolderRetriever(path, **kw)
    await r.start()
    return r


def test_labels_from_names():
    assert label_from_name("rocking_chair_2.png") == "rocking chair"
    assert label_from_name("rocking-chair-02.jpg") == "rocking chair"
    assert label_from_name("cat (1).png") == "cat"
    assert label_from_name("b52.png") == "b52"
    assert label_from_name("2001.png") == "2001"
    assert normalise_label("  The Eiffel-Tower!! ") == "eiffel tower"
    assert normalise_label("A") == "a"


async def test_index_groups_files_by_label_in_name_order(folder):
    r = await started(folder)
    assert r.labels == {
        "Eiffel Tower": ["Eiffel-Tower-01.png"],
        "black cat": ["black_cat.webp"],
        "rocking chair": ["rocking-chair.jpg", "rocking_chair_2.png"],
    }


async def test_best_match_and_its_first_file(folder):
    r = await started(folder)
    got = await r.search("Rocking chairs")
    assert got.status == "ok" and got.title == "rocking chair" and got.source == "image_folder"
    assert got.url == str((folder / "rocking-chair.jpg").resolve()) and got.mime == "image/jpeg"
    assert got.data == (folder / "rocking-chair.jpg").read_bytes()
    cat = await r.search("a cat")
    assert cat.status == "ok" and cat.title == "black cat" and cat.mime == "image/webp"
    tower = await r.search("the eiffel tower in Paris")
    assert tower.status == "ok" and tower.title == "Eiffel Tower"
    assert (await r.search("rockingchair")).title == "rocking chair"


async def test_below_the_threshold_is_no_result(folder):
    r = await started(folder)
    got = await r.search("submarine")
    assert got.status == "no_result" and got.data is None and "0.5" in got.error
    strict = await started(folder, min_similarity=0.95)
    assert (await strict.search("rocking chairs")).status == "no_result"
    assert (await strict.search("Rocking Chair")).status == "ok"
    assert similarity("cat", "caterpillar") < 0.5 <= similarity("a black cat", "cat")


async def test_labels_json_overrides_names(folder):
    (folder / "labels.json").write_text(json.dumps({"black_cat.webp": "Panther", "rocking_chair_2.png": "armchair"}))
    r = await started(folder)
    assert r.labels["Panther"] == ["black_cat.webp"] and r.labels["armchair"] == ["rocking_chair_2.png"]
    assert (await r.search("panther")).url.endswith("black_cat.webp")
    assert (await r.search("black cat")).status == "no_result"


async def test_ties_go_to_file_name_order(tmp_path):
    write_image(tmp_path / "b.png", "blue")
    write_image(tmp_path / "a.png", "red")
    (tmp_path / "labels.json").write_text(json.dumps({"a.png": "red bus", "b.png": "red car"}))
    assert (await (await started(tmp_path)).search("red")).url.endswith("a.png")
    (tmp_path / "labels.json").write_text(json.dumps({"a.png": "red car", "b.png": "red bus"}))
    assert (await (await started(tmp_path)).search("red")).url.endswith("a.png")


async def test_folder_errors_name_the_path(tmp_path):
    missing = tmp_path / "nowhere"
    with pytest.raises(SpecError, match="nowhere"):
        await started(missing)
    empty = tmp_path / "empty"
    empty.mkdir()
    (empty / "readme.txt").write_text("x")
    with pytest.raises(SpecError, match="no images"):
        await started(empty)
    write_image(empty / "cat.png")
    (empty / "labels.json").write_text(json.dumps({"dog.png": "dog"}))
    with pytest.raises(SpecError, match="dog.png"):
        await started(empty)
    (empty / "labels.json").write_text("{not json")
    with pytest.raises(SpecError, match="labels.json"):
        await started(empty)


async def test_identity_changes_when_the_folder_changes(folder):
    r1 = await started(folder)
    assert str(folder.resolve()) in r1.identity
    assert (await started(folder)).identity == r1.identity
    write_image(folder / "teapot.png")
    r2 = await started(folder)
    assert r2.identity != r1.identity
    (folder / "labels.json").write_text(json.dumps({"teapot.png": "kettle"}))
    r3 = await started(folder)
    assert r3.identity != r2.identity
    assert (await started(folder, min_similarity=0.7)).identity != r3.identity
    os.remove(folder / "teapot.png")
    os.remove(folder / "labels.json")
    assert (await started(folder)).identity == r1.identity


async def test_a_file_that_is_not_an_image_is_image_error(tmp_path):
    (tmp_path / "cat.png").write_bytes(b"definitely not a png")
    got = await (await started(tmp_path)).search("cat")
    assert got.status == "image_error" and "not an image" in got.error and got.title == "cat"


async def test_empty_query_is_a_bad_request(folder):
    with pytest.raises(BadRequest):
        await (await started(folder)).search("  ")


async def test_provider_resolves_and_stores(folder, tmp_path):
    prov = create_provider("lib", ModelSpec(provider="image_folder", model="folder", path=str(folder)))
    await prov.start()
    try:
        assert prov.identity.startswith(f"image_folder:{folder.resolve()}#")
        prov.blobs = BlobStore(tmp_path / "blobs")
        resp = await prov.generate(ChatRequest("lib", (Message.user("black cat"),)))
        got = Retrieved.from_json(resp.text)
        assert got.status == "ok" and prov.blobs.get(got.sha256) == (folder / "black_cat.webp").read_bytes()
        miss = Retrieved.from_json((await prov.generate(ChatRequest("lib", (Message.user("zebra"),)))).text)
        assert miss.status == "no_result" and miss.sha256 is None
    finally:
        await prov.close()


async def test_provider_without_path_is_a_spec_error():
    prov = create_provider("lib", ModelSpec(provider="image_folder", model="folder"))
    with pytest.raises(SpecError, match="path"):
        await prov.start()
