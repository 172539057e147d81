"""Property tests of the reply reader (judgekit/providers/replies.py) and the cache's row check:
whatever JSON a server puts in a reply, the result is a sane response (non-blank text that
encodes as UTF-8, token counts in range, a row the cache file takes) or a classified error,
never another exception."""

import json

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from judgekit.cache import schema
from judgekit.cache._rows import RequestMeta, response_row, response_row_problem
from judgekit.errors import EmptyReply, MalformedReply, NoAnswer
from judgekit.providers.replies import MAX_CALL_TOKENS, chat_completion_response, reply_text, token_count

PROPS = settings(max_examples=250, deadline=None, derandomize=True, database=None,
                 suppress_health_check=[HealthCheck.too_slow])

# any JSON value, with the odd things real servers send mixed in
scalars = (st.none() | st.booleans() | st.integers(min_value=-(2**70), max_value=2**70)
           | st.floats(allow_nan=True, allow_infinity=True) | st.text(max_size=12)
           | st.sampled_from(["", "   ", "\n", "\ud800", "ok", "lots", "text", "output_text", "reasoning",
                              "refusal"]))
json_values = st.recursive(scalars, lambda inner: st.lists(inner, max_size=4)
                           | st.dictionaries(st.sampled_from(["type", "text", "value", "refusal", "x"]), inner,
                                             max_size=3), max_leaves=12)
parts = st.fixed_dictionaries({"type": st.sampled_from(["text", "output_text", "reasoning", "refusal", "image_url"]),
                               "text": json_values}) | json_values
contents = json_values | st.lists(parts, max_size=4)
counts = (st.none() | st.booleans() | st.integers(min_value=-(2**64), max_value=2**64)
          | st.floats(allow_nan=True, allow_infinity=True) | st.sampled_from([12.0, 0, 2**31, MAX_CALL_TOKENS, "7"]))
usages = st.none() | st.fixed_dictionaries({"prompt_tokens": counts, "completion_tokens": counts}) | json_values


def _check(resp) -> None:
    assert isinstance(resp.text, str) and resp.text.strip()
    resp.text.encode("utf-8")
    for n in (resp.usage.input_tokens, resp.usage.output_tokens):
        assert type(n) is int and 0 <= n <= MAX_CALL_TOKENS
    assert isinstance(resp.finish_reason, str) and isinstance(resp.request_id, str)
    resp.request_id.encode("utf-8")
    resp.finish_reason.encode("utf-8")


@PROPS
@given(content=contents, refusal=st.none() | json_values, usage=usages, finish=json_values, rid=json_values)
def test_any_reply_is_a_response_or_a_classified_error(content, refusal, usage, finish, rid):
    body = {"id": rid, "choices": [{"message": {"role": "assistant", "content": content, "refusal": refusal},
                                    "finish_reason": finish}], "usage": usage}
    try:
        resp = chat_completion_response(body, {}, 0.1)
    except (EmptyReply, MalformedReply, NoAnswer):
        return
    _check(resp)
    # and the cache takes it as it is
    row = response_row("k", RequestMeta("openai", "m"), resp, "run")
    assert response_row_problem(row) is None


@PROPS
@given(body=json_values)
def test_any_json_body_is_a_response_or_a_classified_error(body):
    try:
        _check(chat_completion_response(body, {"x-request-id": "r"}, 0.0))
    except (EmptyReply, MalformedReply, NoAnswer):
        pass


@PROPS
@given(content=contents)
def test_text_parts_are_joined_and_blank_text_is_empty(content):
    try:
        text = reply_text(content)
    except (EmptyReply, NoAnswer):
        # nothing with a non-space character was in a text part
        if isinstance(content, str):
            assert not content.strip()
        return
    except MalformedReply:
        assert not isinstance(content, str) and content is not None
        return
    assert text.strip()
    if isinstance(content, str):
        assert text == content or "\ufffd" in text  # unchanged, but for lone surrogates


@PROPS
@given(value=counts)
def test_token_counts_are_sane_or_malformed(value):
    try:
        n = token_count(value, "prompt_tokens")
    except MalformedReply:
        assert not (type(value) is int and 0 <= value <= MAX_CALL_TOKENS) and value is not None
        return
    assert type(n) is int and 0 <= n <= MAX_CALL_TOKENS


_CON = []


def _real_responses_table():
    """An in-memory database at the cache's current schema (built once)."""
    if not _CON:
        _CON.append(schema.open_database(":memory:"))
    return _CON[0]


@settings(max_examples=200, deadline=None, derandomize=True, database=None)
@given(values=st.lists(st.tuples(st.sampled_from(list(schema.RESPONSE_COLUMNS)), json_values),
                       min_size=1, max_size=3))
def test_a_row_the_check_passes_is_one_duckdb_takes(values):
    """The row check agrees with DuckDB: a row it lets through inserts, as the log's replay does."""
    from judgekit.cache._worker import _REPLACE_RESPONSES

    good = ["k", "openai", "m", "u", "s", "i", "text", 1, 2, "stop", 0.5, "r", 0.0, "h", "run", 1_700_000_000_000_000]
    names = [n for n, _ in schema.RESPONSE_COLUMNS]
    row = list(good)
    for (name, _typ), v in values:
        row[names.index(name)] = v
    try:
        row = json.loads(json.dumps(row))  # as replay reads it back
    except (ValueError, UnicodeEncodeError):
        return
    if response_row_problem(row) is not None:
        return
    con = _real_responses_table()
    con.execute(_REPLACE_RESPONSES, [[v] for v in row])
    assert con.execute("select count(*) from responses where key = $1", [row[0]]).fetchone()[0] == 1
    con.execute("delete from responses")
