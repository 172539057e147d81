"""The records every layer shares: messages, generation parameters, requests and responses.

Data flows one way (spec -> plan -> engine -> providers -> cache -> parsers -> metrics ->
report) and these records are what travels.  They are plain frozen dataclasses rather than
pydantic models because they sit on the engine's hot path (tens of thousands per run);
the run spec, which is parsed once, is pydantic (``judgekit.config``).
"""

from __future__ import annotations

import base64
import hashlib
from dataclasses import dataclass, field
from typing import Any, Literal, Union

__all__ = [
    "ImagePart",
    "TextPart",
    "Part",
    "Message",
    "GenParams",
    "ChatRequest",
    "ChatResponse",
    "Usage",
]


@dataclass(frozen=True, slots=True)
class TextPart:
    """A piece of text inside a message."""

    text: str


@dataclass(frozen=True, slots=True)
class ImagePart:
    """An image inside a message, carried as encoded bytes (PNG/JPEG/...).

    ``sha256`` is the content hash used in cache keys, so a key never depends on how the
    bytes were base64-encoded or where the file lived.
    """

    data: bytes
    mime: str = "image/png"
    sha256: str = ""
    width: int = 0
    height: int = 0

    def __post_init__(self) -> None:
        if not self.sha256:
            object.__setattr__(self, "sha256", hashlib.sha256(self.data).hexdigest())
        if not (self.width and self.height):
            w, h = _image_size(self.data)
            object.__setattr__(self, "width", w)
            object.__setattr__(self, "height", h)

    def b64(self) -> str:
        return base64.b64encode(self.data).decode("ascii")

    def data_url(self) -> str:
        return f"data:{self.mime};base64,{self.b64()}"


Part = Union[TextPart, ImagePart]


@dataclass(frozen=True, slots=True)
class Message:
    """One chat message: a role and an ordered list of parts (text and images in order)."""

    role: Literal["system", "user", "assistant"]
    parts: tuple[Part, ...]

    @classmethod
    def user(cls, *parts: Part | str) -> "Message":
        return cls("user", tuple(TextPart(p) if isinstance(p, str) else p for p in parts))

    @classmethod
    def system(cls, text: str) -> "Message":
        return cls("system", (TextPart(text),))

    def text(self) -> str:
        return "".join(p.text for p in self.parts if isinstance(p, TextPart))

    def images(self) -> list[ImagePart]:
        return [p for p in self.parts if isinstance(p, ImagePart)]


@dataclass(frozen=True, slots=True)
class GenParams:
    """Generation parameters.  Every field here changes the response, so all are in the key."""

    temperature: float | None = None
    max_tokens: int | None = None
    top_p: float | None = None
    seed: int | None = None
    image_detail: Literal["low", "high", "auto"] | None = None
    extra: tuple[tuple[str, Any], ...] = ()
    #: OpenAI o-series / gpt-5: how much the model reasons before answering
    reasoning_effort: Literal["minimal", "low", "medium", "high"] | None = None
    #: Gemini thinking models: the most thinking tokens (0 turns thinking off where allowed)
    thinking_budget: int | None = None

    def key_dict(self) -> dict[str, Any]:
        d: dict[str, Any] = {}
        for name in ("temperature", "max_tokens", "top_p", "seed", "image_detail", "reasoning_effort",
                     "thinking_budget"):
            v = getattr(self, name)
            if v is not None:
                d[name] = v
        if self.extra:
            d["extra"] = dict(self.extra)
        return d


@dataclass(slots=True)
class ChatRequest:
    """A call the engine is asked to make.

    ``model`` is the spec's alias; the engine resolves it to a provider and bucket.
    ``stage`` (e.g. ``candidate``, ``pairwise``) and ``item_id`` are for progress, cost and
    records; they are not part of the cache key.  ``sample_index`` is (so ``n`` samples at
    temperature > 0 are ``n`` entries), and so is ``prompt_hash``, the hash of the prompt
    template file that produced the messages.
    """

    model: str
    messages: tuple[Message, ...]
    params: GenParams = field(default_factory=GenParams)
    stage: str = "default"
    item_id: str = ""
    sample_index: int = 0
    prompt_hash: str = ""
    attempt_tag: str = ""  # distinguishes a deliberate re-ask (e.g. "reask1") from the first ask


@dataclass(frozen=True, slots=True)
class Usage:
    """Tokens one call was billed for, as the provider reports them."""

    input_tokens: int = 0
    #: everything billed as output: the text, and reasoning / thinking tokens (OpenAI counts
    #: reasoning inside ``completion_tokens``; Gemini's ``thoughts_token_count`` is added to it)
    output_tokens: int = 0
    #: the part of ``input_tokens`` served from the provider's prompt cache (billed at its cached rate)
    cached_input_tokens: int = 0
    #: the part of ``output_tokens`` spent reasoning or thinking (not in the text)
    reasoning_tokens: int = 0
    #: the part of ``input_tokens`` written to the provider's prompt cache (Anthropic's
    #: ``cache_creation_input_tokens``: billed at its cache-write rate, 1.25x input for 5 minutes)
    cache_write_tokens: int = 0
    #: the part of ``cache_write_tokens`` written with a 1-hour lifetime (Anthropic's
    #: ``cache_creation.ephemeral_1h_input_tokens``: billed at 2x input)
    cache_write_1h_tokens: int = 0


#: ``ChatResponse.finish_reason`` of a reply cut at the output limit, whatever the provider
#: called it (OpenAI ``length``, Gemini ``MAX_TOKENS``)
TRUNCATED = "length"


@dataclass(slots=True)
class ChatResponse:
    """The normalised answer of any provider.

    ``finish_reason`` is normalised across providers: ``"stop"`` for a reply that ended on its
    own, ``"length"`` (:data:`TRUNCATED`) for one cut at the output limit (OpenAI ``length``,
    Gemini ``MAX_TOKENS``); others are the provider's own, lower-cased.  A truncated reply with
    text is an answer (:attr:`truncated` marks it); one with no text is a failure
    (:class:`judgekit.errors.NoOutputBudget`)."""

    text: str
    usage: Usage = field(default_factory=Usage)
    finish_reason: str = ""
    latency_s: float = 0.0
    request_id: str = ""
    cached: bool = False
    cost_usd: float = 0.0
    rate_headers: dict[str, str] | None = None

    @property
    def truncated(self) -> bool:
        """Whether the reply was cut at the output limit (``max_tokens``) before it ended (also
        for replies cached before Gemini's ``max_tokens`` was normalised)."""
        return self.finish_reason in (TRUNCATED, "max_tokens")


def _image_size(data: bytes) -> tuple[int, int]:
    """Width and height read from the header of PNG/JPEG/GIF/WebP bytes, without decoding.

    Falls back to Pillow for anything else; (0, 0) when the bytes are not an image.
    """
    if data[:8] == b"\x89PNG\r\n\x1a\n" and len(data) >= 24:
        return int.from_bytes(data[16:20], "big"), int.from_bytes(data[20:24], "big")
    if data[:6] in (b"GIF87a", b"GIF89a") and len(data) >= 10:
        return int.from_bytes(data[6:8], "little"), int.from_bytes(data[8:10], "little")
    try:
        import io

        from PIL import Image

        with Image.open(io.BytesIO(data)) as im:
            return im.size
    except Exception:
        return 0, 0
