"""The generic pairwise benchmark's bad input: one line on stderr naming the file, row and field,
exit 2, no traceback, before any call (the CLI, in-process); and the rule that makes every
judgment the candidate's (a property over replies and orders)."""

import json

from hypothesis import given, settings
from hypothesis import strategies as st
from generic_helpers import user_error
from pairwise_helpers import PROMPT, QUESTIONS, answers_file, write_case

from judgekit.judging.items import GenericItem
from judgekit.benchmarks.pairwise.pipeline import judgment
from judgekit.benchmarks.pairwise.results import tidy_rows
from judgekit.engine import CallResult
from judgekit.parsers.generic import verdict_parser
from judgekit.types import ChatRequest, ChatResponse


def _user_error(spec, *names: str) -> str:
    line = user_error(["run", str(spec), "--out", str(spec.parent / "out"), "--cache", str(spec.parent / "cache.duckdb")],
                      *names)
    assert not (spec.parent / "cache.duckdb").exists() or not (spec.parent / "out" / "summary.json").exists()
    return line


def test_unknown_placeholder_names_the_prompt_file_line_and_placeholder(tmp_path):
    spec = write_case(tmp_path, prompt=PROMPT.replace("{answer_b}", "{answr_b}"))
    line = PROMPT.split("{answer_b}")[0].count("\n") + 1
    _user_error(spec, "judge.txt", f"line {line}", "{answr_b}")


def test_a_data_column_is_a_placeholder(tmp_path):
    """{expert} is a column of the data, so a prompt may use it; {nope} is not."""
    spec = write_case(tmp_path, prompt=PROMPT + "\nAn expert wrote: {expert} {nope}\n")
    _user_error(spec, "judge.txt", "{nope}")


def test_missing_question_names_the_data_file_and_row(tmp_path):
    rows = [dict(q) for q in QUESTIONS]
    rows[2]["question"] = ""
    spec = write_case(tmp_path, rows=rows)
    _user_error(spec, "questions.jsonl", "row 3", "'question'")


def test_answers_file_with_an_unknown_id(tmp_path):
    answers_file(tmp_path / "mine.jsonl", {"a1": "42", "zz9": "an answer to no question"})
    spec = write_case(tmp_path, options='answers = { "mine" = "mine.jsonl" }\n')
    _user_error(spec, "mine.jsonl", "row 2", "zz9")


def test_a_candidates_answer_column_missing_from_its_file(tmp_path):
    rows = [dict(q, ans_x="an answer") for q in QUESTIONS]
    spec = write_case(tmp_path, rows=rows,
                      options='answers = { "x" = { file = "questions.jsonl", answer_column = "ans_x" }, '
                              '"y" = { file = "questions.jsonl", answer_column = "ans_y" } }\n')
    _user_error(spec, "questions.jsonl", "row 1", "'ans_y'", "options.answers.y.answer_column")
    spec = write_case(tmp_path / "typo", rows=rows,
                      options='answers = { "x" = { file = "questions.jsonl", column = "ans_x" } }\n')
    _user_error(spec, "spec.toml", "options.answers.x.column: unknown key")


def test_two_baselines_and_an_empty_baseline_cell(tmp_path):
    spec = write_case(tmp_path / "two", options='baseline_column = "expert"\n')
    _user_error(spec, "roles.baseline", "options.baseline_column")
    rows = [dict(q) for q in QUESTIONS]
    rows[1]["expert"] = " "
    spec = write_case(tmp_path / "cell", rows=rows, options='baseline_column = "expert"\n',
                      roles='candidates = ["my-vlm"]\njudge = "judge"')
    _user_error(spec, "questions.jsonl", "row 2", "'expert'")


def test_bad_regex_and_unknown_verdict_parser(tmp_path):
    spec = write_case(tmp_path / "re", options='verdict = "regex"\nregex = "(?P<verdict>[AB"\n')
    _user_error(spec, "options.regex")
    spec = write_case(tmp_path / "name", options='verdict = "elo"\n')
    _user_error(spec, "options.verdict")


# -- the candidate's side ------------------------------------------------------------------------
_TOKENS = {"A>>B": -2, "A>B": -1, "A=B": 0, "B>A": 1, "B>>A": 2, "B<<A": -2, "B<A": -1, "A<B": 1, "A<<B": 2}
_ITEM = GenericItem(id="x1", row=1, question="q", images=[], reference=None, criteria=None, category=None,
                    fields={})


class _Prep:
    parse = staticmethod(verdict_parser("arena_hard"))


@settings(max_examples=150, deadline=None)
@given(token=st.sampled_from(sorted(_TOKENS)), order=st.sampled_from([0, 1]),
       before=st.text(alphabet=st.characters(blacklist_characters="[]"), max_size=60),
       after=st.text(alphabet=st.characters(blacklist_characters="[]"), max_size=20))
def test_a_judgment_is_the_candidates_score_in_either_order(token, order, before, after):
    """Order 0 shows the baseline as A: the parser's score for B is the candidate's; order 1
    shows the candidate as A: it is negated.  The token and its place are kept for the report,
    and the tidy row carries the same value."""
    reply = f"{before}My final verdict is: [[{token}]]{after}"
    req = ChatRequest("judge", ())
    j = judgment(_Prep(), CallResult(req, ChatResponse(reply)), model="m", judge="judge", item=_ITEM, order=order)
    assert j["ok"] and j["score"] == (_TOKENS[token] if order == 0 else -_TOKENS[token])
    assert reply[j["span_start"]:j["span_end"]] == j["verdict"] == f"[[{token}]]"
    assert j["category"] == "all" and j["task"] == "all"
    (row,) = tidy_rows([j])
    assert row["value"] == j["score"] and row["order"] == order and row["verdict"] == j["verdict"]
    assert json.loads(json.dumps(row["extra"]))["span"] == [j["span_start"], j["span_end"]]


@given(reply=st.text(alphabet=st.characters(blacklist_characters="[]"), max_size=80), order=st.sampled_from([0, 1]))
@settings(max_examples=60, deadline=None)
def test_a_reply_without_a_verdict_is_a_counted_parse_failure(reply, order):
    j = judgment(_Prep(), CallResult(ChatRequest("judge", ()), ChatResponse(reply)), model="m", judge="judge",
                 item=_ITEM, order=order)
    assert not j["ok"] and j["score"] is None and j["error_kind"] == "parse_failure" and j["judge_text"] == reply


@settings(max_examples=200, deadline=None)
@given(reply=st.text(alphabet="AB [] x\n", max_size=40), data=st.data())
def test_the_highlight_marks_the_place_the_verdict_was_read(reply, data):
    """The page marks a highlight's last occurrence: the text chosen covers the token read
    (widened to its line when the token occurs again later), unless its line repeats too."""
    from judgekit.benchmarks.pairwise.report import _highlight

    if not reply:
        return
    start = data.draw(st.integers(0, len(reply) - 1))
    end = data.draw(st.integers(start + 1, len(reply)))
    token = reply[start:end]
    h = _highlight(reply, start, end)
    assert h is not None and token in h
    at = reply.rfind(h)
    if not (at <= start and end <= at + len(h)):  # only where the token's whole line occurs again later
        lo = reply.rfind("\n", 0, start) + 1
        hi = reply.find("\n", end)
        line = reply[lo:len(reply) if hi < 0 else hi]
        assert h == token and reply.rfind(line) != lo
