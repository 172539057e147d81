"""Cache keys: stable, sensitive to what changes a response, blind to everything else."""

from __future__ import annotations

import judgekit.cache.keys as keys_mod
from judgekit.cache.keys import cache_key, messages_fingerprint
from judgekit.types import ChatRequest, GenParams, ImagePart, Message, TextPart

PNG = b"\x89PNG\r\n\x1a\n" + bytes(16) + b"img1"


def _msgs(text: str = "hello", img: bytes = PNG, mime: str = "image/png") -> tuple[Message, ...]:
    return (Message.system("judge"), Message.user(text, ImagePart(img, mime=mime)))


BASE = dict(
    provider="openai",
    model="gpt-4o",
    base_url="https://api.openai.com/v1",
    params=GenParams(temperature=0.0, max_tokens=100),
    sample_index=0,
    prompt_hash="abc",
)


def key(**over):
    kw = dict(BASE, messages=_msgs())
    kw.update(over)
    return cache_key(**kw)


def test_all():
    assert set(keys_mod.__all__) == {"KEY_FORMAT", "cache_key", "messages_fingerprint",
                                     "params_canonical"}


def test_golden_value_pins_the_encoding():
    # changing this value invalidates every cache file in the wild: bump KEY_FORMAT on purpose
    assert key() == "91fc6d070c8152a134f88ebd926ea662f3d2efe0aa9fa8697153769058eeca88"


def test_stable_across_equal_objects():
    a = key()
    b = cache_key(**dict(BASE, messages=_msgs(), params=GenParams(max_tokens=100, temperature=0.0)))
    assert a == b and len(a) == 64 and int(a, 16) >= 0


def test_sensitive_to_everything_that_changes_a_response():
    base = key()
    variants = [
        key(provider="azure"),
        key(model="gpt-4o-mini"),
        key(base_url="https://eu.api.openai.com/v1"),
        key(params=GenParams(temperature=0.7, max_tokens=100)),
        key(params=GenParams(temperature=0.0, max_tokens=101)),
        key(params=GenParams(temperature=0.0, max_tokens=100, top_p=0.9)),
        key(params=GenParams(temperature=0.0, max_tokens=100, seed=1)),
        key(params=GenParams(temperature=0.0, max_tokens=100, image_detail="low")),
        key(params=GenParams(temperature=0.0, max_tokens=100, extra=(("logprobs", True),))),
        key(sample_index=1),
        key(prompt_hash="abd"),
        key(attempt_tag="reask1"),
        key(messages=_msgs(text="hello!")),
        key(messages=_msgs(img=PNG + b"x")),
        key(messages=(Message.user("judge"), _msgs()[1])),  # role
        key(messages=(_msgs()[1], _msgs()[0])),  # message order
        key(messages=(Message.system("judge"),
                      Message("user", (ImagePart(PNG), TextPart("hello"))))),  # part order
        key(messages=(Message.system("judge"), Message.user("hel", "lo", ImagePart(PNG)))),
        key(messages=(Message.system("judgehello"), Message.user(ImagePart(PNG)))),
        key(messages=_msgs()[:1]),
    ]
    assert base not in variants
    assert len(set(variants)) == len(variants)


def test_blind_to_what_does_not_change_a_response():
    base = key()
    same = [
        key(messages=_msgs(mime="image/jpeg")),  # mime label; only the bytes' hash counts
        key(base_url="https://api.openai.com/v1/"),
        key(base_url=" https://api.openai.com/v1 "),
        key(params=GenParams(temperature=0, max_tokens=100)),  # int vs float temperature
    ]
    assert all(k == base for k in same)
    # extra params: order does not matter
    a = key(params=GenParams(extra=(("a", 1), ("b", [1, 2]))))
    b = key(params=GenParams(extra=(("b", [1, 2]), ("a", 1))))
    assert a == b


def test_request_fields_outside_the_key_do_not_matter():
    """stage, item_id and the spec's alias live on ChatRequest but never reach the key."""

    def from_request(req: ChatRequest) -> str:
        return cache_key(provider="openai", model="gpt-4o", base_url="", messages=req.messages,
                         params=req.params, sample_index=req.sample_index,
                         prompt_hash=req.prompt_hash, attempt_tag=req.attempt_tag)

    r1 = ChatRequest(model="judge", messages=_msgs(), stage="pairwise", item_id="q1")
    r2 = ChatRequest(model="grader", messages=_msgs(), stage="candidate", item_id="q9")
    assert from_request(r1) == from_request(r2)


def test_image_keyed_by_hash_not_bytes():
    big = ImagePart(PNG, sha256="f" * 64)  # a precomputed hash is trusted as is
    k1 = key(messages=(Message.user("x", big),))
    k2 = key(messages=(Message.user("x", ImagePart(b"other bytes", sha256="f" * 64)),))
    assert k1 == k2


def test_messages_fingerprint():
    assert messages_fingerprint(_msgs()) == messages_fingerprint(_msgs())
    assert messages_fingerprint(_msgs()) != messages_fingerprint(_msgs(text="other"))
    assert messages_fingerprint(_msgs()) != key()
