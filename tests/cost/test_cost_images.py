"""Image token rules (OpenAI tiles and patches, Gemini crop units)."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as hs

from judgekit.cost.tokens import image_tokens


@pytest.mark.parametrize(
    "model, size, detail, tokens",
    [
        # OpenAI's worked examples
        ("gpt-4o", (1024, 1024), "high", 765),
        ("gpt-4o", (2048, 4096), "high", 1105),
        ("gpt-4o", (4096, 8192), "low", 85),
        ("gpt-4o-2024-08-06", (1024, 1024), None, 765),
        ("gpt-4o", (1024, 1024), "auto", 765),
        # never upscaled: one tile
        ("gpt-4o", (100, 100), "high", 255),
        ("gpt-4o", (512, 512), "high", 255),
        ("gpt-4o", (513, 512), "high", 425),
        # wide image: fits 2048, shortest side already < 768
        ("gpt-4o", (2048, 512), "high", 85 + 170 * 4),
        # 4096x1024 -> 2048x512: 4 tiles
        ("gpt-4o", (4096, 1024), "high", 765),
        ("gpt-4.1", (1024, 1024), "high", 765),
        ("chatgpt-4o-latest", (1024, 1024), "high", 765),
        ("gpt-4o-mini", (1024, 1024), "low", 2833),
        ("gpt-4o-mini", (1024, 1024), "high", 2833 + 4 * 5667),
        ("o3", (1024, 1024), "high", 75 + 4 * 150),
        ("o1", (1024, 1024), "low", 75),
        ("gpt-5", (1024, 1024), "high", 70 + 4 * 140),
        # patch models: 32 px patches x multiplier, detail ignored
        ("gpt-4.1-mini", (1024, 1024), "high", 1659),  # 1024 * 1.62 = 1658.88
        ("gpt-4.1-mini", (1024, 1024), "low", 1659),
        ("gpt-4.1-nano", (1024, 1024), None, 2520),  # 1024 * 2.46 = 2519.04
        ("o4-mini", (1024, 1024), None, 1762),  # 1024 * 1.72 = 1761.28
        # OpenAI's example: 1800x2400 shrinks to 1056x1408 = 33 x 44 = 1452 patches
        ("gpt-4.1-mini", (1800, 2400), None, 2353),  # 1452 * 1.62 = 2352.24
        ("gpt-5-nano", (128, 64), None, 20),  # 8 patches * 2.46 = 19.68
    ],
)
def test_openai(model: str, size: tuple[int, int], detail: str | None, tokens: int) -> None:
    assert image_tokens("openai", model, *size, detail) == tokens


@pytest.mark.parametrize(
    "model, size, tokens",
    [
        # Gemini 2.x (the tokens guide): <= 384 px both sides is 258, else 768 px tiles of 258
        ("gemini-2.0-flash", (384, 384), 258),
        ("gemini-2.0-flash", (100, 50), 258),
        ("gemini-2.5-pro", (385, 384), 258),  # one tile covers it
        ("gemini-2.5-flash", (600, 400), 258),  # was 6 x 258 by the 1.5 crop units
        ("gemini-2.0-flash", (768, 768), 258),
        ("gemini-2.0-flash", (769, 768), 2 * 258),
        ("gemini-2.0-flash", (1000, 1000), 4 * 258),
        ("gemini-2.0-flash", (1024, 1024), 4 * 258),
        ("gemini-2.5-flash", (3000, 1000), 8 * 258),  # 4 x 2 (was 10 x 258)
        ("gemini-2.5-flash", (3000, 3000), 16 * 258),
        ("gemini-2.5-flash-lite", (1980, 1380), 6 * 258),
        # Gemini 1.5 (the image-understanding guide): crop units of min(w, h) / 1.5, 256..768 px
        ("gemini-1.5-pro", (384, 300), 258),
        ("gemini-1.5-pro", (600, 400), 6 * 258),  # unit 266.7: 3 x 2
        ("gemini-1.5-flash", (385, 384), 4 * 258),  # unit clamped up to 256: 2 x 2
        ("gemini-1.5-pro", (3000, 3000), 16 * 258),  # unit clamped down to 768: 4 x 4
        # Gemini 3: media_resolution's default for images (high)
        ("gemini-3-pro-preview", (100, 100), 1120),
        ("gemini-3-pro-preview", (4000, 3000), 1120),
    ],
)
def test_gemini(model: str, size: tuple[int, int], tokens: int) -> None:
    assert image_tokens("gemini", model, *size, "low") == tokens


@settings(max_examples=300, deadline=None, derandomize=True)
@given(w=hs.integers(1, 8000), h=hs.integers(1, 8000), dw=hs.integers(0, 500), dh=hs.integers(0, 500))
def test_gemini_2_rule_property(w: int, h: int, dw: int, dh: int) -> None:
    """Every 768 px tile (or part) of each side is 258 tokens, a small image exactly one tile;
    a larger image never costs less; the 1.5 rule never counts fewer than the 2.x rule."""
    n = image_tokens("gemini", "gemini-2.5-pro", w, h, None)
    assert n % 258 == 0 and n >= 258
    assert n == 258 * -(-w // 768) * -(-h // 768)
    assert image_tokens("gemini", "gemini-2.5-pro", w + dw, h + dh, None) >= n
    assert image_tokens("gemini", "gemini-1.5-pro", w, h, None) >= n


def test_gemini_model_through_another_provider_uses_gemini_rule() -> None:
    assert image_tokens("openai", "google/gemini-2.0-flash", 1000, 1000, None) == 1032


def test_unknown_provider_uses_openai_rule() -> None:
    assert image_tokens("acme", "some-vlm", 1024, 1024, None) == 765
    assert image_tokens("acme", "some-vlm", 1024, 1024, "low") == 85


def test_non_positive_size_rejected() -> None:
    with pytest.raises(ValueError):
        image_tokens("openai", "gpt-4o", 0, 100, None)
