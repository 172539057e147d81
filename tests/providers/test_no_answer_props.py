"""Property tests of the no-answer rules (providers/replies.py, providers/gemini.py): whatever a
reply's finish reason, refusal, text and usage, it is an answer exactly when it has text and no
filter withheld it; otherwise it is the failure its stated reason gives, and only a reply with
no stated reason is retried.  Also the Gemini 429 reading (quota or rate limit, RetryInfo)."""

from __future__ import annotations

from google.genai import types
from hypothesis import given, settings
from hypothesis import strategies as st

from judgekit.errors import (Blocked, ContentFiltered, EmptyReply, NoAnswer, NoOutputBudget, ProviderError, Refused)
from judgekit.providers.gemini import gemini_quota, retry_delay
from judgekit.providers.gemini_replies import gemini_chat_response
from judgekit.providers.replies import chat_completion_response

PROPS = settings(max_examples=300, deadline=None, derandomize=True, database=None)

texts = st.sampled_from([None, "", "  \n", "An answer.", " ok "]) | st.text(max_size=8)
refusals = st.sampled_from([None, "", "   ", "I can't help with that."])
finishes = st.sampled_from(["stop", "length", "content_filter", "tool_calls", None])
counts = st.integers(0, 5000)


def _expected_openai(finish, refusal, text):
    has_text = bool(text and text.strip())
    if finish == "content_filter":
        return ContentFiltered
    if has_text:
        return None
    if refusal and refusal.strip():
        return Refused
    if finish == "length":
        return NoOutputBudget
    return EmptyReply


@PROPS
@given(content=texts, refusal=refusals, finish=finishes, prompt=counts, out=counts, reasoning=counts, cached=counts)
def test_openai_reply_outcome_follows_its_stated_reason(content, refusal, finish, prompt, out, reasoning, cached):
    body = {"id": "c", "choices": [{"message": {"role": "assistant", "content": content, "refusal": refusal},
                                    "finish_reason": finish}],
            "usage": {"prompt_tokens": prompt, "completion_tokens": out,
                      "prompt_tokens_details": {"cached_tokens": cached},
                      "completion_tokens_details": {"reasoning_tokens": reasoning}}}
    expected = _expected_openai(finish, refusal, content)
    try:
        r = chat_completion_response(body, {}, 0.1)
    except ProviderError as e:
        assert type(e) is expected, (e, expected)
        assert e.retryable is (expected is EmptyReply)  # a stated reason is final
        assert e.raw and '"choices"' in e.raw  # kept with the reply
        assert (e.usage.input_tokens, e.usage.output_tokens, e.usage.reasoning_tokens, e.usage.cached_input_tokens) \
            == (prompt, out, reasoning, cached)
        return
    assert expected is None and r.text == content
    assert r.truncated is (finish == "length")
    assert (r.usage.reasoning_tokens, r.usage.cached_input_tokens) == (reasoning, cached)


g_finishes = st.sampled_from(["STOP", "MAX_TOKENS", "SAFETY", "RECITATION", "PROHIBITED_CONTENT", "BLOCKLIST",
                              "SPII", "OTHER", "LANGUAGE", "IMAGE_SAFETY", "FINISH_REASON_UNSPECIFIED"])
g_parts = st.lists(st.tuples(st.sampled_from(["", "  ", "answer text", "x"]), st.booleans()), max_size=3)
_FILTERS = {"SAFETY", "RECITATION", "PROHIBITED_CONTENT", "BLOCKLIST", "SPII", "IMAGE_SAFETY"}


@PROPS
@given(candidate=st.booleans(), finish=g_finishes, parts=g_parts,
       block=st.sampled_from([None, "SAFETY", "OTHER", "PROHIBITED_CONTENT"]),
       prompt=counts, cands=counts, thoughts=counts, cached=counts)
def test_gemini_reply_outcome_follows_its_stated_reason(candidate, finish, parts, block, prompt, cands, thoughts,
                                                        cached):
    usage = types.GenerateContentResponseUsageMetadata(prompt_token_count=prompt, candidates_token_count=cands,
                                                       thoughts_token_count=thoughts,
                                                       cached_content_token_count=cached)
    cand = types.Candidate(content=types.Content(role="model", parts=[types.Part(text=t, thought=th)
                                                                      for t, th in parts]),
                           finish_reason=types.FinishReason(finish))
    resp = types.GenerateContentResponse(
        candidates=[cand] if candidate else None, usage_metadata=usage,
        prompt_feedback=types.GenerateContentResponsePromptFeedback(block_reason=types.BlockedReason(block))
        if block else None)
    answer = "".join(t for t, th in parts if not th)
    if not candidate:
        expected = Blocked if block else EmptyReply
    elif finish in _FILTERS:
        expected = ContentFiltered
    elif answer.strip():
        expected = None
    elif finish == "MAX_TOKENS":
        expected = NoOutputBudget
    else:
        expected = EmptyReply
    try:
        r = gemini_chat_response(resp, 0.1)
    except ProviderError as e:
        assert type(e) is expected, (e, expected)
        assert isinstance(e, NoAnswer) is (expected is not EmptyReply) and e.retryable is (expected is EmptyReply)
        assert e.raw and e.usage.output_tokens == cands + thoughts  # thoughts are billed as output
        return
    assert expected is None and r.text == answer
    assert r.finish_reason == {"STOP": "stop", "MAX_TOKENS": "length", "FINISH_REASON_UNSPECIFIED": ""}.get(
        finish, finish.lower())
    assert r.truncated is (finish == "MAX_TOKENS")
    u = r.usage
    assert (u.input_tokens, u.output_tokens, u.reasoning_tokens, u.cached_input_tokens) == (
        prompt, cands + thoughts, thoughts, cached)


def _violation(quota_id: str, metric: str, value: str = "250") -> dict:
    return {"@type": "type.googleapis.com/google.rpc.QuotaFailure",
            "violations": [{"quotaMetric": f"generativelanguage.googleapis.com/{metric}", "quotaId": quota_id,
                            "quotaValue": value}]}


@PROPS
@given(unit=st.sampled_from(["Minute", "Day"]), free=st.booleans(), value=st.sampled_from(["0", "15", "250"]),
       delay=st.one_of(st.integers(0, 3600).map(str), st.sampled_from(["1.5", "0.25"])))
def test_gemini_429_is_quota_only_per_day_or_zero(unit, free, value, delay):
    quota_id = f"GenerateRequestsPer{unit}PerProjectPerModel" + ("-FreeTier" if free else "")
    details = [_violation(quota_id, "generate_content_free_tier_requests" if free else "generate_requests", value),
               {"@type": "type.googleapis.com/google.rpc.RetryInfo", "retryDelay": f"{delay}s"}]
    quota = gemini_quota(details)
    assert (quota is not None) is (unit == "Day" or value == "0")
    if quota is not None:
        assert quota_id in quota[0]
        assert quota[1] == ("at midnight Pacific time" if unit == "Day" else "")
    assert retry_delay(details) == float(delay)
    assert retry_delay(details[:1]) is None and gemini_quota(details[1:]) is None
