"""Token counts: tokenizer choice, exact text counts, request framing."""

from __future__ import annotations

import pytest

from judgekit.cost.tokens import (
    CHAT_REPLY_PRIMER_TOKENS,
    CHAT_TOKENS_PER_MESSAGE,
    UNKNOWN_IMAGE_SIZE,
    RequestTokens,
    TokenCount,
    count_request,
    count_text,
    image_tokens,
    tokenizer_for,
)
from judgekit.types import GenParams, ImagePart, Message


@pytest.mark.parametrize(
    "model, encoding",
    [
        ("gpt-4o", "o200k_base"),
        ("gpt-4o-2024-08-06", "o200k_base"),
        ("openai/gpt-4o-mini", "o200k_base"),
        ("ft:gpt-4o-mini-2024-07-18:acme::abc123", "o200k_base"),
        ("chatgpt-4o-latest", "o200k_base"),
        ("gpt-4.1-nano", "o200k_base"),
        ("gpt-4.5-preview", "o200k_base"),
        ("gpt-5", "o200k_base"),
        ("gpt-5.1", "o200k_base"),
        ("o1", "o200k_base"),
        ("o3-mini-2025-01-31", "o200k_base"),
        ("o4-mini", "o200k_base"),
        ("GPT-4O", "o200k_base"),
        ("gpt-4", "cl100k_base"),
        ("gpt-4-0613", "cl100k_base"),
        ("gpt-4-turbo-2024-04-09", "cl100k_base"),
        ("gpt-3.5-turbo", "cl100k_base"),
        ("gpt-35-turbo", "cl100k_base"),
        ("gemini-2.0-flash", None),
        ("models/gemini-2.5-pro", None),
        ("claude-3-5-sonnet", None),
        ("Qwen/Qwen2.5-VL-7B-Instruct", None),
        ("o100", None),
        ("gpt-4x", None),
    ],
)
def test_tokenizer_for(model: str, encoding: str | None) -> None:
    assert tokenizer_for(model) == encoding


@pytest.mark.parametrize(
    "text, o200k, cl100k",
    [
        ("", 0, 0),
        ("hello world", 2, 2),
        ("Hello, world!", 4, 4),
        ("tiktoken is great!", 6, 6),
        ("antidisestablishmentarianism", 6, 6),
        ("你好，世界", 3, 6),
        ("こんにちは世界", 2, 4),
        # special-token strings are plain text to an API: 7 tokens, not 1
        ("<|endoftext|>", 7, 7),
    ],
)
def test_count_text_exact(text: str, o200k: int, cl100k: int) -> None:
    assert count_text("gpt-4o", text) == TokenCount(o200k, True)
    assert count_text("gpt-4-turbo", text) == TokenCount(cl100k, True)


def test_library_matches_openai_published_ids() -> None:
    """The dependency is the exact tokenizer: ids from OpenAI's tiktoken cookbook."""
    import bpe_openai

    assert bpe_openai.get_encoding("o200k_base").encode("tiktoken is great!") == [83, 8251, 2488, 382, 2212, 0]
    assert bpe_openai.get_encoding("cl100k_base").encode("tiktoken is great!") == [83, 1609, 5963, 374, 2294, 0]


def test_unknown_tokenizer_is_o200k_approximation() -> None:
    text = "你好，世界 — the judge said 7/10."
    assert count_text("gemini-2.0-flash", text) == TokenCount(count_text("gpt-4o", text).n, False)


def test_lone_surrogate_counts() -> None:
    assert count_text("gpt-4o", "a\udc80b").n == 3


def _image(width: int, height: int) -> ImagePart:
    return ImagePart(b"not decoded", width=width, height=height)


def test_count_request_openai_framing() -> None:
    system, user = "You are a strict judge.", "Score the answer."
    messages = (Message.system(system), Message.user(user, _image(1024, 1024)))
    got = count_request("openai", "gpt-4o", messages, GenParams(image_detail="high"))
    text = count_text("gpt-4o", system).n + count_text("gpt-4o", user).n
    assert got == RequestTokens(text + 765 + 2 * CHAT_TOKENS_PER_MESSAGE + CHAT_REPLY_PRIMER_TOKENS, True)
    # the literal: "hello world" (2) + 3 per message + 3 reply primer
    assert count_request("openai", "gpt-4o", [Message.user("hello world")], GenParams()).input == 8


def test_count_request_detail_low_and_auto() -> None:
    messages = [Message.user(_image(2048, 4096))]
    framing = CHAT_TOKENS_PER_MESSAGE + CHAT_REPLY_PRIMER_TOKENS
    assert count_request("openai", "gpt-4o", messages, GenParams(image_detail="low")).input == 85 + framing
    assert count_request("azure", "gpt-4o", messages, GenParams()).input == 1105 + framing


def test_count_request_gemini_has_no_framing_and_is_approximate() -> None:
    messages = [Message.system("Be brief."), Message.user("hello world", _image(1000, 1000))]
    got = count_request("gemini", "gemini-2.0-flash", messages, GenParams())
    assert got == RequestTokens(count_text("x", "Be brief.").n + 2 + 1032, False)


def test_count_request_unknown_image_size_is_an_upper_bound() -> None:
    part = ImagePart(b"not an image")  # no header: size (0, 0)
    assert (part.width, part.height) == (0, 0)
    got = count_request("openai", "gpt-4o", [Message.user(part)], GenParams(image_detail="high"))
    assert not got.exact
    assert got.input == image_tokens("openai", "gpt-4o", *UNKNOWN_IMAGE_SIZE, "high") + 6 == 1445 + 6


def test_counting_loads_the_rust_tokenizer_alone_and_the_package_still_imports_after(tmp_path):
    """The counter loads bpe_openai's compiled module without the package's __init__ (which
    decodes three vocabularies in Python at every start); the package imported afterwards reuses
    that module and encodes the same counts."""
    import subprocess
    import sys

    code = """
import sys
from judgekit.cost.tokens import count_text
texts = ["hello world", "Final Verdict is: [[A>B]]", "日本語のテキスト ✓ café", "x" * 5000]
ours = [count_text(m, t).n for m in ("gpt-4o", "gpt-4") for t in texts]
assert "bpe_openai" not in sys.modules and "bpe_openai._bindings" in sys.modules, sorted(sys.modules)
import bpe_openai
theirs = [len(bpe_openai.get_encoding(e).encode_ordinary(t)) for e in ("o200k_base", "cl100k_base") for t in texts]
assert ours == theirs, (ours, theirs)
print("ok", ours)
"""
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0 and out.stdout.startswith("ok"), out.stderr[-2000:]
