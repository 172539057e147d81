"""Creation-MMBench data: the task table, the TSV loader, the shipped sample and the prompt builders.
The parquet layout, the reference's loading rules and the image decoding: test_creation_layouts.py."""

from __future__ import annotations

import base64
import csv
import io
import re
from pathlib import Path

import pytest
from PIL import Image

from judgekit.benchmarks.creation_mmbench import prompts as P
from judgekit.benchmarks.creation_mmbench.data import load_tsv, parse_criteria
from judgekit.image_cells import image_mime
from creation_mmbench_sample import COLUMNS, write_sample
from judgekit.benchmarks.creation_mmbench.tasks import (
    UNCATEGORIZED,
    categories,
    category_code,
    normalise_task,
    task_categories,
)
from judgekit.errors import DataError
from judgekit.resources import load_prompt, samples_dir
from judgekit.types import ImagePart, TextPart

REPO = Path(__file__).resolve().parents[2]
SAMPLE = samples_dir() / "creation_mmbench" / "sample.tsv"


# --------------------------------------------------------------------------- task table


def test_task_table_has_51_tasks_in_four_categories():
    counts = {c.code: len(c.tasks) for c in categories()}
    assert counts == {"LW": 8, "CFW": 18, "PFW": 19, "CMU": 6}
    assert len(task_categories()) == 51


@pytest.mark.parametrize(
    "task, code",
    [
        ("story continue", "LW"),
        ("daily conversation creation", "LW"),
        ("landscape to poem", "LW"),
        ("historical story creation", "LW"),
        ("daily achievement show off", "CFW"),
        ("social media travel content", "CFW"),
        ("daily affairs inquiries", "CFW"),
        ("personal event summaries", "CFW"),
        ("teaching plan", "PFW"),
        ("product marketing strategy", "PFW"),
        ("nutritional formulation of recipe", "PFW"),
        ("clothing match design", "PFW"),
        ("software engineering diagram explanation", "PFW"),
        ("travel itinerary planning and recommendations", "CMU"),
        ("advertisement explanation", "CMU"),
        ("document understanding", "CMU"),
        ("snapshot analysis", "CMU"),
    ],
)
def test_tasks_named_in_the_paper_captions(task, code):
    assert category_code(task_categories()[task]) == code


def test_normalise_task():
    assert normalise_task("Story_Continue") == "story continue"
    assert normalise_task("  daily--affairs __ inquiries ") == "daily affairs inquiries"


# --------------------------------------------------------------------------- the shipped sample


@pytest.fixture(scope="module")
def sample():
    return load_tsv(SAMPLE)


def test_sample_is_small_and_complete(sample):
    assert SAMPLE.stat().st_size < 400_000
    assert len(sample) == 12
    assert sample.unknown_tasks == set()
    per_cat: dict[str, int] = {}
    for it in sample:
        per_cat[it.category] = per_cat.get(it.category, 0) + 1
        assert it.question.startswith("Assume you are ")
        assert it.role and it.instruction and it.requirement
        assert 80 <= len(it.reference_answer.split()) <= 200
        assert all(isinstance(im, ImagePart) and im.width == 320 and im.height == 240 for im in it.images)
    assert sorted(per_cat.values()) == [3, 3, 3, 3]
    assert set(per_cat) == {c.name for c in categories()}


def test_sample_special_rows(sample):
    by = sample.by_index()
    # a list of three images
    assert len(by["1"].images) == 3
    assert by["1"].image_paths == ("1_0.jpg", "1_1.jpg", "1_2.jpg")
    # a pointer row reuses the images of the row it names
    assert [im.sha256 for im in by["3"].images] == [im.sha256 for im in by["0"].images]
    # plain-string criteria: subjective only
    assert by["2"].vf_criteria is None and by["2"].subjective_criteria.startswith("1. Naturalness")
    # a ground truth; everyone else has none
    assert by["8"].ground_truth.startswith("The diagram is a flowchart")
    assert [it.index for it in sample if it.ground_truth] == ["8"]
    # one PNG, the rest JPEG
    mimes = {it.index: {im.mime for im in it.images} for it in sample}
    assert mimes.pop("7") == {"image/png"}
    assert all(m == {"image/jpeg"} for m in mimes.values())
    # dict criteria with both kinds elsewhere
    assert all(it.vf_criteria for it in sample if it.index != "2")


def test_sample_writer_round_trips(tmp_path):
    out = write_sample(tmp_path / "s.tsv", seed=3)
    data = load_tsv(out)
    assert [it.index for it in data] == [str(i) for i in range(12)]
    with out.open(encoding="utf-8", newline="") as fh:
        header = next(csv.reader(fh, delimiter="\t"))
    assert tuple(header) == COLUMNS
    # the question is the query template filled with the row's parts
    it = data.items[0]
    assert it.question == P.compose_question(
        role=it.role, background=it.background, instruction=it.instruction, requirement=it.requirement
    )


# --------------------------------------------------------------------------- malformed files


def _b64_image(fmt: str = "PNG") -> str:
    buf = io.BytesIO()
    Image.new("RGB", (8, 6), "red").save(buf, format=fmt)
    return base64.b64encode(buf.getvalue()).decode()


GOOD_CRITERIA = repr({"General Subjective Criteria": "be good", "Visual Factuality Criteria": "see red"})


def _row(index: str, **over: str) -> dict[str, str]:
    row = {
        "index": index,
        "question": f"Question {index}?",
        "task_name": "story_continue",
        "role": "",
        "background": "",
        "instruction": "",
        "requirement": "",
        "ground_truth": "",
        "source": "test",
        "criteria": GOOD_CRITERIA,
        "image_path": f"{index}.png",
        "reference_answer_by_gpt4o": "An answer.",
        "image": _b64_image(),
    }
    row.update(over)
    return row


def _write(path: Path, rows: list[dict[str, str]], columns: tuple[str, ...] | None = None) -> Path:
    cols = columns or tuple(rows[0])
    with path.open("w", encoding="utf-8", newline="") as fh:
        w = csv.writer(fh, delimiter="\t", lineterminator="\n")
        w.writerow(cols)
        for r in rows:
            w.writerow([r.get(c, "") for c in cols])
    return path


def test_good_small_file_with_quoted_multiline_fields(tmp_path):
    rows = [
        _row("10", question='Line one\n\tline "two"', ground_truth="nan"),
        _row("11", image="10", ground_truth="a truth"),
        _row("12", image=repr([_b64_image("JPEG"), _b64_image("PNG")])),
    ]
    data = load_tsv(_write(tmp_path / "ok.tsv", rows))
    a, b, c = data.items
    assert a.question == 'Line one\n\tline "two"'
    assert a.ground_truth == ""  # pandas' NA spelling, as pd.isna sees it
    assert b.ground_truth == "a truth"
    assert b.images == a.images
    assert [im.mime for im in c.images] == ["image/jpeg", "image/png"]
    assert a.vf_criteria == "see red" and a.subjective_criteria == "be good"


@pytest.mark.parametrize(
    "over, column, fragment",
    [
        ({"image": "!!!" + "A" * 100}, "image", "bad base64"),
        ({"image": base64.b64encode(b"not an image at all " * 5).decode()}, "image", "not a decodable image"),
        ({"image": "['abc', " + "x" * 80 + "]"}, "image", "unparseable list"),
        ({"image": "['abc', " + "x" * 80}, "image", "bad base64"),  # a list only when it ends with ]
        ({"image": "[" + repr(_b64_image()) + ", 7]"}, "image", "list of base64 strings"),
        ({"image": "99"}, "image", "not in the file"),
        ({"image": "6"}, "image", "itself a pointer"),  # itself
        ({"criteria": "['General Subjective Criteria', 'x']"}, "criteria", "neither a dict nor text"),
        ({"criteria": "   "}, "criteria", "empty criteria"),
        ({"criteria": "{'Visual Factuality Criteria': 'only vf'}"}, "criteria", "no subjective"),
        ({"criteria": "{1: 'x'}"}, "criteria", "not a string"),
        ({"question": "   "}, "question", "empty question"),
    ],
)
def test_malformed_row_names_row_and_column(tmp_path, over, column, fragment):
    rows = [_row("5"), _row("6", **over)]
    path = _write(tmp_path / "bad.tsv", rows)
    with pytest.raises(DataError) as ei:
        load_tsv(path)
    err = ei.value
    assert err.column == column
    assert err.row == "2 (index 6)"
    assert fragment in str(err)
    assert str(path) in str(err)


def test_pointers_resolve_in_file_order_as_the_reference(tmp_path):
    # VLMEvalKit replaces each pointer in place, in file order: a pointer to an earlier pointer
    # row takes the images that row already took; one to a later pointer row fails its assert
    rows = [_row("1"), _row("2", image="1"), _row("3", image="2")]
    data = load_tsv(_write(tmp_path / "chain.tsv", rows))
    assert data.items[2].images == data.items[1].images == data.items[0].images
    rows = [_row("1"), _row("2", image="3"), _row("3", image="1")]
    with pytest.raises(DataError, match="itself a pointer") as ei:
        load_tsv(_write(tmp_path / "later.tsv", rows))
    assert ei.value.row == "2 (index 2)"


def test_missing_required_column(tmp_path):
    row = _row("1")
    cols = tuple(c for c in row if c != "criteria")
    with pytest.raises(DataError) as ei:
        load_tsv(_write(tmp_path / "nocrit.tsv", [row], cols))
    assert ei.value.column == "criteria" and ei.value.row is None


def test_duplicate_index(tmp_path):
    with pytest.raises(DataError, match="duplicate") as ei:
        load_tsv(_write(tmp_path / "dup.tsv", [_row("1"), _row("1")]))
    assert ei.value.column == "index"


def test_unknown_tasks_are_reported_and_category_sources(tmp_path):
    rows = [
        _row("1", task_name="Underwater_Basket_Weaving"),
        _row("2", task_name="story-continue"),
        _row("3", task_name="my_custom_task", category="Literary Writing"),
        _row("4", task_name="teaching_plan", category=""),
    ]
    path = _write(tmp_path / "cats.tsv", rows, (*_row("x"), "category"))
    data = load_tsv(path)
    cats = [it.category for it in data]
    assert cats == [UNCATEGORIZED, "Literary Writing", "Literary Writing", "Professional Functional Writing"]
    assert data.unknown_tasks == {"Underwater_Basket_Weaving"}
    # the caller's mapping wins over the table and the column
    data = load_tsv(path, task_categories={"underwater basket weaving": "Sports", "my custom task": "Mine"})
    assert [it.category for it in data][:3] == ["Sports", "Literary Writing", "Mine"]
    assert data.unknown_tasks == set()


def test_parse_criteria_forms():
    # as VLMEvalKit's build_prompt: eval (here literal_eval), the last key of each kind wins, the
    # values as str.format writes them; text that is not a literal is subjective criteria
    assert parse_criteria("just text") == ("just text", None)
    assert parse_criteria("1. Imagery: vivid?\n2. Form") == ("1. Imagery: vivid?\n2. Form", None)
    assert parse_criteria("'quoted text'") == ("quoted text", None)
    subj, vf = parse_criteria(
        repr({"General Subjective Criteria": ["a", "b"], "VF 1": "x", "VF 2": {"Key Points": ["p", "q"]}})
    )
    assert subj == "['a', 'b']"
    assert vf == "{'Key Points': ['p', 'q']}"
    assert parse_criteria(repr({"Subjective A": "s1", "SUBJECTIVE B": "s2", "vf": 3})) == ("s2", "3")
    assert parse_criteria(repr({"subjective": "s", "objective": ""})) == ("s", "")
    # a dict literal that does not parse is text, as the reference's bare except makes it
    broken = "{'General Subjective Criteria': 'x', 'broken"
    assert parse_criteria(broken) == (broken, None)


def test_image_mime_from_magic_bytes():
    assert image_mime(base64.b64decode(_b64_image("JPEG"))) == "image/jpeg"
    assert image_mime(base64.b64decode(_b64_image("PNG"))) == "image/png"
    assert image_mime(b"RIFF\x00\x00\x00\x00WEBPVP8 ") == "image/webp"
    assert image_mime(b"hello") is None


# --------------------------------------------------------------------------- prompt builders


def test_candidate_messages_images_then_question(sample):
    it = sample.by_index()["1"]
    (msg,) = P.candidate_messages(it)
    assert msg.role == "user"
    assert [type(p) for p in msg.parts] == [ImagePart, ImagePart, ImagePart, TextPart]
    assert msg.parts[-1].text == it.question


def test_pairwise_prompt_layout(sample):
    it = sample.by_index()["0"]
    prompt, text = P.pairwise_prompt(it, "BASELINE", "CANDIDATE")
    assert prompt.hash == load_prompt("creation_mmbench/pairwise_judge.txt").hash
    lines = text.split("\n")
    for block, body in (("INSTRUCTIONS", it.question.split("\n")[0]), ("ASSISTANT A", "BASELINE"),
                        ("CRITERIA", it.subjective_criteria.split("\n")[0]), ("ASSISTANT B", "CANDIDATE")):
        i = lines.index(f"[{block}]")
        assert lines[i + 1] == body
        assert f"[END {block}]" in lines[i + 1:]
    assert text.index("[ASSISTANT A]") < text.index("[CRITERIA]") < text.index("[ASSISTANT B]")
    assert lines[-2] == "Final Verdict is: [[VERDICT]]"
    assert re.search(r"\{[a-z_]+\}", text) is None  # every placeholder filled


def test_fill_is_single_pass(sample):
    it = sample.by_index()["0"]
    _, text = P.pairwise_prompt(it, "A says {criteria}", "B says {answer_a}")
    assert "A says {criteria}" in text and "B says {answer_a}" in text


def test_vfs_prompt_variants(sample):
    by = sample.by_index()
    p_gt, t_gt = P.vfs_prompt(by["8"], "x", "y")
    p_no, t_no = P.vfs_prompt(by["0"], "x", "y")
    assert p_gt.name.endswith("vfs_judge_gt.txt") and p_no.name.endswith("vfs_judge_nogt.txt")
    assert "[GROUND TRUTH]\n" + by["8"].ground_truth + "\n[END GROUND TRUTH]" in t_gt
    assert "[GROUND TRUTH]" not in t_no
    assert "[VISUAL FACTUALITY CRITERIA]\n" + by["0"].vf_criteria + "\n[END CRITERIA]" in t_no
    for t in (t_gt, t_no):
        assert t.rstrip("\n").split("\n")[-2:] == [
            "Response A Visual Factuality Score: X/10",
            "Response B Visual Factuality Score: Y/10",
        ]
    with pytest.raises(ValueError):
        P.vfs_prompt(by["2"], "x", "y")  # no visual factuality criteria


def test_text_only_prompts(sample):
    it = sample.by_index()["6"]
    _, q = P.to_query(it, "A bar chart with four bars.")
    assert q.startswith("Assume you are " + it.role)
    assert q.rstrip().endswith("Description of the image: A bar chart with four bars.")
    _, generic = P.describe_instruction("generic")
    _, specific = P.describe_instruction("query_specific", "The values of the bars.\n")
    assert specific.startswith(generic.rstrip())
    assert specific.rstrip().endswith("following aspects: The values of the bars.")
    _, few = P.query_specific_fewshot(it)
    assert few.rstrip().endswith(it.question.strip() + "\n##Contents to observe##:")
    with pytest.raises(ValueError):
        P.describe_instruction("other")  # type: ignore[arg-type]


def test_no_prompt_text_in_python_sources():
    phrases = ("impartial judge", "Visual Factuality Score: X", "Please carefully describe", "Assume you are",
               "Contents to observe")
    ours = [*(REPO / "judgekit/benchmarks/creation_mmbench").glob("*.py"), REPO / "judgekit/parsers/creation.py"]
    for py in ours:
        src = py.read_text(encoding="utf-8")
        for phrase in phrases:
            assert phrase not in src, f"{py.relative_to(REPO)} holds prompt text {phrase!r}"


def test_prompt_files_placeholders():
    expected = {
        "pairwise_judge.txt": {"instructions", "answer_a", "criteria", "answer_b"},
        "vfs_judge_gt.txt": {"instructions", "answer_a", "vf_criteria", "answer_b", "ground_truth"},
        "vfs_judge_nogt.txt": {"instructions", "answer_a", "vf_criteria", "answer_b"},
        "query.txt": {"role", "background", "instruction", "requirement"},
        "to_query.txt": {"role", "background", "instruction", "requirement", "description"},
        "describe_generic.txt": set(),
        "describe_query_specific.txt": {"query_specific_part"},
        "query_specific_fewshot.txt": {"question"},
    }
    for name, fields in expected.items():
        text = load_prompt(f"creation_mmbench/{name}").text
        assert set(re.findall(r"\{([a-z_]+)\}", text)) == fields, name
