"""Generic benchmarks' prompt templates: placeholders, escapes, images, checks and loading."""

from __future__ import annotations

import hashlib
import io
import json
import re
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st
from PIL import Image

from judgekit.judging.template import Template, load_template
from judgekit.config import load_spec
from judgekit.errors import SpecError
from judgekit.resources import prompts_dir, samples_dir
from judgekit.types import ImagePart, TextPart


def image(color: str) -> ImagePart:
    buf = io.BytesIO()
    Image.new("RGB", (2, 2), color).save(buf, format="PNG")
    return ImagePart(buf.getvalue())


def spec_at(tmp: Path):
    path = tmp / "spec.toml"
    path.write_text('name = "t"\nbenchmark = "pairwise"\ndata = "d.jsonl"\n'
                    '[models.j]\nprovider = "sim"\nmodel = "sim-judge"\n[roles]\njudge = "j"\n', encoding="utf-8")
    return load_spec(str(path))


def test_placeholders_in_order_and_hash():
    text = "Q: {question}\n{images}\nA: {answer_a} then {answer_b}, again {question} {{not}} {\"a\": 1} [[A>B]]"
    t = Template("judge.txt", text)
    assert t.placeholders == ["question", "images", "answer_a", "answer_b"]
    assert t.hash == hashlib.sha256(text.encode()).hexdigest()[:16]
    assert Template("other.txt", text).hash == t.hash != Template("judge.txt", text + " ").hash


def test_render_fills_in_one_pass_and_places_images():
    red, blue = image("red"), image("blue")
    t = Template("p.txt", "Look:\n{images}\nQ: {question} {{literal}} {\"k\": {n}} [[A>>B]]")
    m = t.render({"question": "{n} and {images}", "n": "5"}, [red, blue])
    assert m.role == "user"
    assert m.parts == (TextPart("Look:\n"), red, blue, TextPart('\nQ: {n} and {images} {literal} {"k": 5} [[A>>B]]'))


def test_images_go_before_the_text_without_the_placeholder():
    red = image("red")
    assert Template("p.txt", "Q: {question}").render({"question": "x"}, [red]).parts == (red, TextPart("Q: x"))
    assert Template("p.txt", "Q: {question}").render({"question": "x"}, []).parts == (TextPart("Q: x"),)
    # {images} with no images: one text part, as if the placeholder were not there
    assert Template("p.txt", "a{images}b").render({}, []).parts == (TextPart("ab"),)
    assert Template("p.txt", "{images}").render({}, [red]).parts == (red,)


def test_check_names_file_line_and_placeholder():
    t = Template("/x/judge.txt", "first line\nsecond {question}\nthird {answr} {other}")
    t.check({"question", "answr", "other"})
    with pytest.raises(SpecError, match=r"^/x/judge\.txt line 3: unknown placeholder \{answr\} \(known: "
                                        r"\{answer\}, \{images\}, \{question\}"):
        t.check({"question", "answer"})


def test_images_twice_is_refused():
    with pytest.raises(SpecError, match=r"p\.txt line 2: \{images\} appears more than once"):
        Template("p.txt", "{images}\n{images}")


def test_missing_value_at_render():
    with pytest.raises(SpecError, match=r"p\.txt line 1: no value for placeholder \{question\}"):
        Template("p.txt", "{question}").render({}, [])


# --------------------------------------------------------------------------- properties

names = st.sampled_from(["question", "answer", "x", "ref_1"])
values = st.text(alphabet="{}abx_ \n[]AB>=", max_size=15)


@given(value=values, name=names, before=st.text(alphabet="ab \n:", max_size=5))
def test_a_value_is_never_expanded(value, name, before):
    t = Template("p.txt", before + "{" + name + "}|{question}|{answer}|{x}|{ref_1}")
    others = {k: f"<{k}>" for k in ("question", "answer", "x", "ref_1")}
    out = t.render({**others, name: value}, []).text()
    expected = "|".join(value if k == name else others[k] for k in ("question", "answer", "x", "ref_1"))
    head = before + value
    assert out == head + "|" + expected


plain = st.text(alphabet=st.characters(codec="utf-8", exclude_characters="\x00"), max_size=40).filter(
    lambda s: "{{" not in s and "}}" not in s and not re.search(r"\{[A-Za-z_][A-Za-z0-9_]*\}", s))


@given(text=plain)
def test_text_without_placeholders_renders_unchanged(text):
    t = Template("p.txt", text)
    assert t.placeholders == []
    assert t.render({"question": "q"}, []).text() == text


@given(name=st.from_regex(r"[A-Za-z_][A-Za-z0-9_]{0,8}", fullmatch=True), value=values)
def test_doubled_braces_are_literal(name, value):
    t = Template("p.txt", "{{" + name + "}}")
    assert t.placeholders == []
    assert t.render({name: value}, []).text() == "{" + name + "}"


@given(obj=st.dictionaries(st.sampled_from(["a", "b", "score"]), st.integers(), min_size=1, max_size=3))
def test_json_in_a_prompt_is_left_alone(obj):
    text = "Reply as " + json.dumps(obj) + " for {question}"
    assert Template("p.txt", text).render({"question": "Q"}, []).text() == text.replace("{question}", "Q")


# --------------------------------------------------------------------------- loading


def test_load_relative_samples_and_prompts(tmp_path):
    spec = spec_at(tmp_path)
    (tmp_path / "prompts").mkdir()
    (tmp_path / "prompts" / "judge.txt").write_bytes("\ufeffJudge {question}".encode())
    t = load_template(spec, "prompts/judge.txt")
    assert (t.text, t.path, t.placeholders) == ("Judge {question}", str(tmp_path / "prompts" / "judge.txt"), ["question"])

    shipped = next(p for p in prompts_dir().rglob("*.txt"))
    rel = shipped.relative_to(prompts_dir()).as_posix()
    assert load_template(spec, f"prompts:{rel}").text == shipped.read_text(encoding="utf-8-sig")

    sample = next(p for p in samples_dir().rglob("*") if p.is_file() and p.suffix in (".txt", ".jsonl", ".tsv"))
    rel = sample.relative_to(samples_dir()).as_posix()
    assert load_template(spec, f"samples:{rel}").path == str(sample)


def test_load_errors_name_the_option(tmp_path):
    spec = spec_at(tmp_path)
    with pytest.raises(SpecError, match=r"^options\.candidate_prompt: file not found: .*nope\.txt"):
        load_template(spec, "nope.txt", option="options.candidate_prompt")
    with pytest.raises(SpecError, match=r"^options\.judge_prompt: file not found: .*_prompts/nope\.txt"):
        load_template(spec, "prompts:nope.txt")
    (tmp_path / "dir").mkdir()
    with pytest.raises(SpecError, match=r"options\.judge_prompt: is a folder"):
        load_template(spec, "dir")
    (tmp_path / "latin.txt").write_bytes("caf\xe9 {question}".encode("latin-1"))
    with pytest.raises(SpecError, match=r"options\.judge_prompt: .*latin\.txt: not UTF-8: line 1"):
        load_template(spec, "latin.txt")
    with pytest.raises(SpecError, match="must name a prompt file"):
        load_template(spec, " ")


def test_read_template_beside_code_checks_placeholders(tmp_path):
    from judgekit.judging.template import read_template

    (tmp_path / "judge.txt").write_text("\ufeffCriterion: {criterion}\n\nQ: {question}\nA: {answer}", encoding="utf-8")
    t = read_template(tmp_path / "judge.txt", {"criterion", "question", "answer"})
    assert t.path == str(tmp_path / "judge.txt") and t.placeholders == ["criterion", "question", "answer"]
    assert t.text.startswith("Criterion:")  # the byte-order mark dropped, so the hash is the text's
    assert t.hash == hashlib.sha256(t.text.encode()).hexdigest()[:16]
    assert read_template(tmp_path / "judge.txt").placeholders == t.placeholders  # no check asked
    with pytest.raises(SpecError, match=r"judge\.txt line 3: unknown placeholder \{question\}"):
        read_template(tmp_path / "judge.txt", {"criterion", "answer"})
    with pytest.raises(SpecError, match="prompt file not found: .*nope.txt"):
        read_template(tmp_path / "nope.txt")
    (tmp_path / "latin.txt").write_bytes("caf\xe9 {answer}".encode("latin-1"))
    with pytest.raises(SpecError, match="latin.txt"):
        read_template(tmp_path / "latin.txt")
