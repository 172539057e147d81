"""Request sizes the providers document, checked before a request is sent.

- OpenAI (and Azure OpenAI, and the simulator, which answers as they do): at most 20 MB per
  image and 50 MB of images per request (the vision guide's "Image input requirements").  Not
  applied to other OpenAI-compatible servers (``provider = "openai"`` with a ``base_url``): their
  limits are their own.
- Gemini: an inline request (text and images, images base64-encoded as they travel) under 20 MB
  (the image-understanding guide: "the total request size ... under 20MB"; larger files go through
  the File API, which judgekit does not use).

MB is 10**6 bytes, as the guides write it.  A request over a limit fails that call with
:class:`~judgekit.errors.RequestTooLarge`, naming the limit and the size; it is not retried (the
same request is as large the next time) and nothing is downscaled (no benchmark's reference does
it).
"""

from __future__ import annotations

from typing import Iterable

from ..errors import RequestTooLarge
from ..types import ImagePart, Message, TextPart

__all__ = ["MB", "OPENAI_IMAGE_MAX", "OPENAI_IMAGES_PER_REQUEST_MAX", "GEMINI_INLINE_MAX", "check_openai_size",
           "check_gemini_size", "b64_len"]

MB = 1_000_000
OPENAI_IMAGE_MAX = 20 * MB
OPENAI_IMAGES_PER_REQUEST_MAX = 50 * MB
GEMINI_INLINE_MAX = 20 * MB


def _mb(n: int) -> str:
    return f"{n / MB:,.1f} MB"


def b64_len(n: int) -> int:
    """Characters of ``n`` bytes in base64."""
    return 4 * ((n + 2) // 3)


def _images(messages: Iterable[Message]) -> list[ImagePart]:
    return [p for m in messages for p in m.parts if isinstance(p, ImagePart)]


def check_openai_size(messages: Iterable[Message]) -> None:
    """Raise :class:`RequestTooLarge` for an image over 20 MB or over 50 MB of images in all."""
    images = _images(messages)
    total = 0
    for i, image in enumerate(images, 1):
        n = len(image.data)
        total += n
        if n > OPENAI_IMAGE_MAX:
            raise RequestTooLarge(f"image {i} of the request is {_mb(n)} ({image.width}x{image.height} {image.mime}); "
                                  f"the OpenAI API takes at most {_mb(OPENAI_IMAGE_MAX)} per image")
    if total > OPENAI_IMAGES_PER_REQUEST_MAX:
        raise RequestTooLarge(f"the request's {len(images)} images are {_mb(total)} in all; the OpenAI API takes at "
                              f"most {_mb(OPENAI_IMAGES_PER_REQUEST_MAX)} of images per request")


def check_gemini_size(messages: Iterable[Message]) -> None:
    """Raise :class:`RequestTooLarge` for an inline request (text + base64 images) of 20 MB or more."""
    total = 0
    n_images = 0
    for m in messages:
        for p in m.parts:
            if isinstance(p, TextPart):
                total += len(p.text.encode("utf-8", "surrogatepass"))
            else:
                n_images += 1
                total += b64_len(len(p.data))
    if total >= GEMINI_INLINE_MAX:
        raise RequestTooLarge(f"the request is {_mb(total)} inline ({n_images} images, base64-encoded); the Gemini "
                              f"API takes inline requests under {_mb(GEMINI_INLINE_MAX)}")
