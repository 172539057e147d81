"""Tiny models with random weights, for tests and perf scripts (no model hub needed).

Each builder creates a model from a config, saves it with ``save_pretrained`` into ``dir``, and
returns the folder, so a test loads it through the same ``from_pretrained`` path a user's
checkpoint takes (run them with ``HF_HUB_OFFLINE=1``). Weights are seeded, so the same builder
gives the same model every time. Every model is a few hundred kilobytes and runs in
milliseconds on a CPU.

- :func:`build_tiny_clip`: a CLIP vision encoder with a projection (``embed_image``), 32x32
  input, 16-d ``image_embeds``, 32-d hidden state.
- :func:`build_tiny_vlm`: a LLaVA (CLIP vision tower + two-layer Llama) with a word-level
  tokenizer, an ``<image>`` token and a chat template (``chat``).
- :func:`build_tiny_diffusion`: a Stable Diffusion pipeline (tiny UNet, VAE and CLIP text
  encoder, a byte-level BPE CLIP tokenizer, DDIM) (``text_to_image``), sizes divisible by 8.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

__all__ = [
    "TINY_CLIP_DIM",
    "TINY_CLIP_HIDDEN",
    "TINY_VLM_WORDS",
    "build_tiny_clip",
    "build_tiny_diffusion",
    "build_tiny_vlm",
]

TINY_CLIP_DIM = 16  # projection_dim: the length of image_embeds
TINY_CLIP_HIDDEN = 32  # hidden_size: the length of pooler_output and of the CLS token

# The tiny VLM's whole vocabulary besides special tokens; other words map to <unk>.
TINY_VLM_WORDS = (
    "a an the this that is are of in on with and or to what which who describe image picture "
    "photo color red green blue cat dog house tree sky car person man woman small big one two "
    "three yes no please answer question caption write short words about it there here . , ? !"
).split()

_SEED = 1234


def _seed() -> None:
    import torch

    torch.manual_seed(_SEED)


def _vision_config(**overrides):
    from transformers import CLIPVisionConfig

    kwargs = dict(
        image_size=32,
        patch_size=8,
        num_channels=3,
        hidden_size=TINY_CLIP_HIDDEN,
        intermediate_size=64,
        num_hidden_layers=2,
        num_attention_heads=2,
        projection_dim=TINY_CLIP_DIM,
    )
    kwargs.update(overrides)
    return CLIPVisionConfig(**kwargs)


def _image_processor():
    from transformers import CLIPImageProcessor

    return CLIPImageProcessor(
        size={"shortest_edge": 32}, crop_size={"height": 32, "width": 32}, do_center_crop=True
    )


def build_tiny_clip(dir: str | os.PathLike[str]) -> Path:
    """A ``CLIPVisionModelWithProjection`` and its image processor, saved in ``dir``."""
    from transformers import CLIPVisionModelWithProjection

    out = Path(dir)
    out.mkdir(parents=True, exist_ok=True)
    _seed()
    model = CLIPVisionModelWithProjection(_vision_config()).eval()
    model.save_pretrained(out)
    _image_processor().save_pretrained(out)
    return out


# A Llama-2-like chat template: system/user/assistant turns, images as <image> in place.
_VLM_CHAT_TEMPLATE = (
    "{{ bos_token }}"
    "{% for message in messages %}"
    "{{ message['role'] }}:"
    "{% if message['content'] is string %} {{ message['content'] }}"
    "{% else %}{% for part in message['content'] %}"
    "{% if part['type'] == 'image' %} <image>"
    "{% elif part['type'] == 'text' %} {{ part['text'] }}{% endif %}"
    "{% endfor %}{% endif %}"
    "{% if message['role'] == 'assistant' %}{{ eos_token }}{% endif %}{{ '\\n' }}"
    "{% endfor %}"
    "{% if add_generation_prompt %}assistant:{% endif %}"
)


def _vlm_tokenizer():
    from tokenizers import Tokenizer, decoders, normalizers, pre_tokenizers
    from tokenizers.models import WordLevel
    from transformers import PreTrainedTokenizerFast

    specials = ["<pad>", "<s>", "</s>", "<unk>", "<image>"]
    words = specials + ["system", "user", "assistant", ":"] + TINY_VLM_WORDS
    vocab = {w: i for i, w in enumerate(dict.fromkeys(words))}
    tok = Tokenizer(WordLevel(vocab=vocab, unk_token="<unk>"))
    tok.normalizer = normalizers.Lowercase()
    tok.pre_tokenizer = pre_tokenizers.Whitespace()
    tok.decoder = decoders.WordPiece(prefix="##")  # joins words with spaces
    fast = PreTrainedTokenizerFast(
        tokenizer_object=tok,
        bos_token="<s>",
        eos_token="</s>",
        unk_token="<unk>",
        pad_token="<pad>",
        extra_special_tokens={"image_token": "<image>"},
    )
    fast.add_special_tokens({"additional_special_tokens": ["<image>"]})
    return fast


def build_tiny_vlm(dir: str | os.PathLike[str]) -> Path:
    """A ``LlavaForConditionalGeneration`` with its ``LlavaProcessor``, saved in ``dir``."""
    from transformers import LlamaConfig, LlavaConfig, LlavaForConditionalGeneration, LlavaProcessor

    out = Path(dir)
    out.mkdir(parents=True, exist_ok=True)
    tokenizer = _vlm_tokenizer()
    image_token_id = tokenizer.convert_tokens_to_ids("<image>")
    text_config = LlamaConfig(
        vocab_size=len(tokenizer),
        hidden_size=32,
        intermediate_size=64,
        num_hidden_layers=2,
        num_attention_heads=2,
        num_key_value_heads=2,
        max_position_embeddings=512,
        bos_token_id=tokenizer.bos_token_id,
        eos_token_id=tokenizer.eos_token_id,
        pad_token_id=tokenizer.pad_token_id,
    )
    # 32x32 image, 8x8 patches: 16 patch tokens + CLS; "default" drops the CLS -> 16 <image>.
    config = LlavaConfig(
        vision_config=_vision_config(),
        text_config=text_config,
        image_token_index=image_token_id,
        image_seq_length=16,
        vision_feature_select_strategy="default",
        vision_feature_layer=-1,
    )
    _seed()
    model = LlavaForConditionalGeneration(config).eval()
    model.generation_config.bos_token_id = tokenizer.bos_token_id
    model.generation_config.eos_token_id = tokenizer.eos_token_id
    model.generation_config.pad_token_id = tokenizer.pad_token_id
    model.save_pretrained(out)
    processor = LlavaProcessor(
        image_processor=_image_processor(),
        tokenizer=tokenizer,
        patch_size=8,
        vision_feature_select_strategy="default",
        num_additional_image_tokens=1,
        chat_template=_VLM_CHAT_TEMPLATE,
        image_token="<image>",
    )
    processor.save_pretrained(out)
    return out


def _bytes_to_unicode() -> dict[int, str]:
    """GPT-2's byte -> printable character table (byte-level BPE's alphabet)."""
    printable = (
        list(range(ord("!"), ord("~") + 1))
        + list(range(ord("¡"), ord("¬") + 1))
        + list(range(ord("®"), ord("ÿ") + 1))
    )
    table, extra = {}, 0
    for b in range(256):
        if b in printable:
            table[b] = chr(b)
        else:
            table[b] = chr(256 + extra)
            extra += 1
    return table


def _write_clip_tokenizer_files(dir: Path) -> None:
    """A byte-level BPE vocabulary (every byte, alone and word-final) and a few merges."""
    chars = list(_bytes_to_unicode().values())
    tokens = ["<|startoftext|>", "<|endoftext|>"] + chars + [c + "</w>" for c in chars]
    merges = []
    for word in ("a", "the", "cat", "red", "dog", "blue", "sky"):
        for i in range(1, len(word)):  # left-to-right merges ending in the word-final form
            left, right = word[:i], word[i] + ("</w>" if i == len(word) - 1 else "")
            merges.append(f"{left} {right}")
            if left + right not in tokens:
                tokens.append(left + right)
    vocab = {t: i for i, t in enumerate(dict.fromkeys(tokens))}
    (dir / "vocab.json").write_text(json.dumps(vocab, ensure_ascii=False), encoding="utf-8")
    (dir / "merges.txt").write_text("#version: 0.2\n" + "\n".join(merges) + "\n", encoding="utf-8")


def build_tiny_diffusion(dir: str | os.PathLike[str]) -> Path:
    """A ``StableDiffusionPipeline`` (tiny UNet/VAE/CLIP text encoder, DDIM), saved in ``dir``."""
    import tempfile

    from diffusers import AutoencoderKL, DDIMScheduler, StableDiffusionPipeline, UNet2DConditionModel
    from transformers import CLIPTextConfig, CLIPTextModel, CLIPTokenizer

    out = Path(dir)
    out.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as tok_dir:
        _write_clip_tokenizer_files(Path(tok_dir))
        tokenizer = CLIPTokenizer.from_pretrained(tok_dir, model_max_length=16)
    _seed()
    unet = UNet2DConditionModel(
        sample_size=16,
        in_channels=4,
        out_channels=4,
        layers_per_block=1,
        block_out_channels=(8, 16),
        down_block_types=("DownBlock2D", "CrossAttnDownBlock2D"),
        up_block_types=("CrossAttnUpBlock2D", "UpBlock2D"),
        cross_attention_dim=16,
        attention_head_dim=2,
        norm_num_groups=4,
    )
    vae = AutoencoderKL(
        in_channels=3,
        out_channels=3,
        down_block_types=("DownEncoderBlock2D", "DownEncoderBlock2D"),
        up_block_types=("UpDecoderBlock2D", "UpDecoderBlock2D"),
        block_out_channels=(8, 16),
        layers_per_block=1,
        latent_channels=4,
        norm_num_groups=4,
        sample_size=32,
    )
    text_encoder = CLIPTextModel(
        CLIPTextConfig(
            vocab_size=len(tokenizer),
            hidden_size=16,
            intermediate_size=32,
            num_hidden_layers=2,
            num_attention_heads=2,
            max_position_embeddings=16,
            bos_token_id=tokenizer.bos_token_id,
            eos_token_id=tokenizer.eos_token_id,
            pad_token_id=tokenizer.pad_token_id,
        )
    )
    scheduler = DDIMScheduler(
        beta_start=0.00085,
        beta_end=0.012,
        beta_schedule="scaled_linear",
        clip_sample=False,
        set_alpha_to_one=False,
        steps_offset=1,
    )
    pipe = StableDiffusionPipeline(
        vae=vae,
        text_encoder=text_encoder,
        tokenizer=tokenizer,
        unet=unet,
        scheduler=scheduler,
        safety_checker=None,
        feature_extractor=None,
        requires_safety_checker=False,
    )
    pipe.save_pretrained(out)
    return out
