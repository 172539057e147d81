"""Claude's prompt-cache minimum read off any spelling of a model name (property): the family and
version in either order (``claude-3-5-haiku``, ``claude-haiku-4-5``), with or without a date or
``-latest``, a ``provider/`` prefix, any case."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from judgekit.providers.anthropic_wire import prompt_cache_min_tokens


def expected(family: str, major: int, minor: int) -> int:
    if family == "haiku":
        return 4096 if (major, minor) >= (4, 5) else 2048
    if family == "opus" and (major, minor) >= (4, 5):
        return 4096
    return 1024


@given(st.sampled_from(["opus", "sonnet", "haiku"]), st.integers(3, 9), st.integers(0, 9), st.booleans(),
       st.sampled_from(["", "-20250929", "-latest", "@20251001"]), st.sampled_from(["", "anthropic/", "models/"]),
       st.booleans(), st.booleans())
def test_the_minimum_of_any_spelling(family, major, minor, new_order, suffix, prefix, upper, drop_minor):
    version = f"{major}" if drop_minor and minor == 0 else f"{major}-{minor}"
    name = f"claude-{family}-{version}" if new_order else f"claude-{version}-{family}"
    name = prefix + name + suffix
    assert prompt_cache_min_tokens(name.upper() if upper else name) == expected(family, major, minor)


@given(st.text(max_size=30))
def test_any_other_name_is_1024_or_a_haikus_2048(name):
    got = prompt_cache_min_tokens(name)
    assert got in (1024, 2048, 4096)
    if "claude" not in name.lower():
        assert got == (2048 if "haiku" in name.lower() else 1024)
