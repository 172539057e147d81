"""Request sizes the providers document, checked before a request is sent.

- OpenAI (and Azure OpenAI, and the simulator, which answers as they do): at most 20 MB per
  image and 50 MB of images per request (the vision guide's "Image input requirements").  Not
  applied to other OpenAI-compatible servers (``provider = "openai"`` with a ``base_url``): their
  limits are their own.
- Gemini: an inline request (text and images, images base64-encoded as they travel) under 20 MB
  (the image-understanding guide: "the total request size ... under 20MB"; larger files go through
  the File API, which judgekit does not use).
- Anthropic (the Messages API): at most 5 MB of base64 per image, 5,242,880 characters (the API's
  400 says "image exceeds 5 MB maximum: N bytes > 5242880 bytes" of the ``source.base64`` field);
  at most 8000 px on either side of an image, and 2000 px when the request holds more than 20
  images (the vision guide's "General limits"); at most 32 MB per request (the errors guide's
  "Request size limits": a larger body is refused with a 413 ``request_too_large`` before it reaches
  the API), counted here as the text's UTF-8 bytes plus the images' base64.

MB is 10**6 bytes, as the guides write it.  A request over a limit fails that call with
:class:`~judgekit.errors.RequestTooLarge`, naming the limit and the size; it is not retried (the
same request is as large the next time) and nothing is downscaled (no benchmark's reference does
it).
"""

from __future__ import annotations

from typing import Iterable

from ..errors import RequestTooLarge
from ..plural import plural
from ..types import ImagePart, Message, TextPart

__all__ = ["MB", "OPENAI_IMAGE_MAX", "OPENAI_IMAGES_PER_REQUEST_MAX", "GEMINI_INLINE_MAX", "check_openai_size",
           "check_gemini_size", "b64_len", "ANTHROPIC_IMAGE_B64_MAX", "ANTHROPIC_REQUEST_MAX",
           "ANTHROPIC_IMAGE_SIDE_MAX", "ANTHROPIC_MANY_IMAGES_SIDE_MAX", "check_anthropic_size"]

MB = 1_000_000
OPENAI_IMAGE_MAX = 20 * MB
OPENAI_IMAGES_PER_REQUEST_MAX = 50 * MB
GEMINI_INLINE_MAX = 20 * MB
ANTHROPIC_IMAGE_B64_MAX = 5 * 1024 * 1024
ANTHROPIC_REQUEST_MAX = 32 * MB
ANTHROPIC_IMAGE_SIDE_MAX = 8000
#: the side limit of every image in a request of more than :data:`_ANTHROPIC_MANY_IMAGES` images
ANTHROPIC_MANY_IMAGES_SIDE_MAX = 2000
_ANTHROPIC_MANY_IMAGES = 20


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
        raise RequestTooLarge(f"the request's {plural(len(images), 'image')} are {_mb(total)} in all; the OpenAI "
                              "API takes at "
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
        raise RequestTooLarge(f"the request is {_mb(total)} inline ({plural(n_images, 'image')}, base64-encoded); "
                              "the Gemini "
                              f"API takes inline requests under {_mb(GEMINI_INLINE_MAX)}")


def check_anthropic_size(messages: Iterable[Message]) -> None:
    """Raise :class:`RequestTooLarge` for an image over 5 MB of base64 or over the side limits, or
    a request over 32 MB (text and base64 images)."""
    total = 0
    images: list[ImagePart] = []
    for m in messages:
        for p in m.parts:
            if isinstance(p, TextPart):
                total += len(p.text.encode("utf-8", "surrogatepass"))
            else:
                images.append(p)
    side_max = ANTHROPIC_MANY_IMAGES_SIDE_MAX if len(images) > _ANTHROPIC_MANY_IMAGES else ANTHROPIC_IMAGE_SIDE_MAX
    for i, image in enumerate(images, 1):
        n = b64_len(len(image.data))
        total += n
        what = f"image {i} of the request ({image.width}x{image.height} {image.mime})"
        if n > ANTHROPIC_IMAGE_B64_MAX:
            raise RequestTooLarge(f"{what} is {n:,} bytes in base64; the Anthropic API takes at most "
                                  f"{ANTHROPIC_IMAGE_B64_MAX:,} per image")
        if max(image.width, image.height) > side_max:
            many = f" in a request of more than {_ANTHROPIC_MANY_IMAGES} images" if side_max < ANTHROPIC_IMAGE_SIDE_MAX else ""
            raise RequestTooLarge(f"{what} is larger than the Anthropic API takes{many}: at most {side_max} px a side")
    if total > ANTHROPIC_REQUEST_MAX:
        raise RequestTooLarge(f"the request is {_mb(total)} ({plural(len(images), 'image')}, base64-encoded); "
                              "the Anthropic "
                              f"API takes requests of at most {_mb(ANTHROPIC_REQUEST_MAX)}")
