import email.utils
import time

from judgekit.providers.base import parse_duration, retry_after_from_headers


def test_parse_duration():
    assert parse_duration("6ms") == 0.006
    assert parse_duration("1.5s") == 1.5
    assert parse_duration("6m0s") == 360
    assert parse_duration("1h2m3s") == 3723
    assert parse_duration("") is None


def test_retry_after_precedence():
    assert retry_after_from_headers({"retry-after-ms": "250", "retry-after": "3"}) == 0.25
    assert retry_after_from_headers({"retry-after": "3"}) == 3.0
    # reset headers: the limit that was hit, never the other's (nothing says which: the shorter)
    resets = {"x-ratelimit-reset-requests": "2s", "x-ratelimit-reset-tokens": "500ms"}
    assert retry_after_from_headers(resets) == 0.5
    assert retry_after_from_headers({**resets, "x-ratelimit-remaining-requests": "0"}) == 2.0
    assert retry_after_from_headers({**resets, "x-ratelimit-remaining-tokens": "0"}) == 0.5
    assert retry_after_from_headers({}) is None
    when = email.utils.formatdate(time.time() + 10, usegmt=True)
    assert 8 < retry_after_from_headers({"retry-after": when}) <= 10
