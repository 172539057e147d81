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
- :func:`build_tiny_internvl`: an InternVL-shaped stand-in, not InternVL: a remote-code
  checkpoint (``auto_map`` to two source files beside the weights, loaded with
  ``trust_remote_code``) with InternVL's ``chat(tokenizer, pixel_values, question, ...)`` over
  448x448 tiles and a two-layer Llama (``chat`` with ``chat_api: "internvl"``).
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
    "build_tiny_internvl",
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


# --- an InternVL-shaped remote-code chat model ----------------------------------------------
# The source files build_tiny_internvl writes beside the weights: the checkpoint is loaded through
# config.json's auto_map with trust_remote_code, as InternVL checkpoints are.

_TINY_INTERNVL_CONFIG_PY = '''"""TinyInternVLConfig: an InternVL-shaped stand-in's config (judgekit_local.testing)."""

from transformers import PretrainedConfig


class TinyInternVLConfig(PretrainedConfig):
    model_type = "tinyinternvl"

    def __init__(self, llm_config=None, image_size=448, num_image_token=4, **kwargs):
        super().__init__(**kwargs)
        self.llm_config = dict(llm_config or {})
        self.image_size = image_size
        self.num_image_token = num_image_token
'''

_TINY_INTERNVL_MODELING_PY = '''"""TinyInternVLChat: an InternVL-shaped stand-in (judgekit_local.testing), not InternVL.

The vision side average-pools each 448x448 tile to 2x2 and projects every pooled position into
the language model's embedding space (num_image_token = 4 tokens per tile); the language model is
a tiny LlamaForCausalLM.  chat() follows InternVL's calling convention and checks its inputs.
"""

import torch
from torch import nn
from transformers import LlamaConfig, LlamaForCausalLM, PreTrainedModel

from .configuration_tinyinternvl import TinyInternVLConfig

IMG_START_TOKEN = "<img>"
IMG_END_TOKEN = "</img>"
IMG_CONTEXT_TOKEN = "<IMG_CONTEXT>"


class TinyInternVLChat(PreTrainedModel):
    config_class = TinyInternVLConfig
    main_input_name = "pixel_values"
    _no_split_modules = ["LlamaDecoderLayer"]

    def __init__(self, config):
        super().__init__(config)
        self.language_model = LlamaForCausalLM(LlamaConfig(**config.llm_config))
        self.mlp1 = nn.Linear(3, self.language_model.config.hidden_size)
        self.num_image_token = config.num_image_token
        self.image_size = config.image_size
        self.img_context_token_id = None
        self.system_message = ""
        self.post_init()

    def extract_feature(self, pixel_values):
        pooled = nn.functional.adaptive_avg_pool2d(pixel_values, 2)  # (tiles, 3, 2, 2)
        return self.mlp1(pooled.flatten(2).transpose(1, 2))  # (tiles, 4, hidden)

    def chat(self, tokenizer, pixel_values, question, generation_config, num_patches_list=None,
             history=None, return_history=False):
        if history is None and pixel_values is not None and "<image>" not in question:
            question = "<image>\\n" + question
        if num_patches_list is None:
            num_patches_list = [pixel_values.shape[0]] if pixel_values is not None else []
        if question.count("<image>") != len(num_patches_list):
            raise ValueError(f"{question.count('<image>')} <image> placeholders for "
                             f"{len(num_patches_list)} images")
        tiles = sum(num_patches_list)
        if pixel_values is None:
            if tiles:
                raise ValueError("num_patches_list without pixel_values")
        elif tuple(pixel_values.shape) != (tiles, 3, self.image_size, self.image_size):
            raise ValueError(f"pixel_values {tuple(pixel_values.shape)} != ({tiles}, 3, "
                             f"{self.image_size}, {self.image_size})")
        self.img_context_token_id = tokenizer.convert_tokens_to_ids(IMG_CONTEXT_TOKEN)
        query = ""
        for old_question, old_answer in history or []:
            query += f"user: {old_question}\\nassistant: {old_answer}\\n"
        query += f"user: {question}\\nassistant:"
        if self.system_message:
            query = f"system: {self.system_message}\\n" + query
        for n in num_patches_list:
            tokens = IMG_START_TOKEN + IMG_CONTEXT_TOKEN * self.num_image_token * n + IMG_END_TOKEN
            query = query.replace("<image>", tokens, 1)
        inputs = tokenizer(query, return_tensors="pt")
        generation_config = dict(generation_config, eos_token_id=tokenizer.eos_token_id)
        output = self.generate(pixel_values=pixel_values, input_ids=inputs["input_ids"].to(self.device),
                               attention_mask=inputs["attention_mask"].to(self.device), **generation_config)
        response = tokenizer.batch_decode(output, skip_special_tokens=True)[0].strip()
        if return_history:
            return response, list(history or []) + [(question, response)]
        return response

    @torch.no_grad()
    def generate(self, pixel_values=None, input_ids=None, attention_mask=None, **generate_kwargs):
        embeds = self.language_model.get_input_embeddings()(input_ids)
        if pixel_values is not None:
            features = self.extract_feature(pixel_values.to(self.dtype))
            selected = input_ids == self.img_context_token_id
            if int(selected.sum()) != features.shape[0] * features.shape[1]:
                raise ValueError("image context tokens do not match the tiles")
            embeds = embeds.clone()
            embeds[selected] = features.reshape(-1, features.shape[-1]).to(embeds.dtype)
        pad = generate_kwargs.pop("pad_token_id", None)
        if pad is None:
            pad = self.language_model.config.pad_token_id
        return self.language_model.generate(inputs_embeds=embeds, attention_mask=attention_mask,
                                            pad_token_id=pad, **generate_kwargs)
'''


def build_tiny_internvl(dir: str | os.PathLike[str]) -> Path:
    """An InternVL-shaped stand-in (not InternVL): a remote-code checkpoint in ``dir``.

    ``config.json``'s ``auto_map`` points ``AutoConfig``/``AutoModel`` at
    ``configuration_tinyinternvl.TinyInternVLConfig`` and ``modeling_tinyinternvl.TinyInternVLChat``,
    two source files written beside the weights, so it loads only with ``trust_remote_code=True``.
    Like InternVL it is used as ``model.chat(tokenizer, pixel_values, question, generation_config,
    num_patches_list=[...])`` with 448x448 tiles; each ``<image>`` in the question becomes
    ``<img>`` + 4 ``<IMG_CONTEXT>`` per tile + ``</img>``, the projected 2x2-pooled tile. The
    language model is a two-layer Llama over the tiny VLM's word-level vocabulary.
    """
    import importlib.util
    import sys

    from transformers import LlamaConfig

    out = Path(dir)
    out.mkdir(parents=True, exist_ok=True)
    (out / "configuration_tinyinternvl.py").write_text(_TINY_INTERNVL_CONFIG_PY, encoding="utf-8")
    (out / "modeling_tinyinternvl.py").write_text(_TINY_INTERNVL_MODELING_PY, encoding="utf-8")
    tokenizer = _vlm_tokenizer()
    tokenizer.add_tokens(["<img>", "</img>", "<IMG_CONTEXT>"], special_tokens=True)
    llm = LlamaConfig(
        vocab_size=len(tokenizer),
        hidden_size=32,
        intermediate_size=64,
        num_hidden_layers=2,
        num_attention_heads=2,
        num_key_value_heads=2,
        max_position_embeddings=1024,
        bos_token_id=tokenizer.bos_token_id,
        eos_token_id=tokenizer.eos_token_id,
        pad_token_id=tokenizer.pad_token_id,
    )
    # Import the two files as a package of their own (the modeling file imports the config
    # relatively), build the model from them, and save it with an auto_map pointing back at them.
    package = f"_judgekit_tiny_internvl_{os.getpid()}_{id(out)}"
    init = importlib.util.spec_from_file_location(package, out / "configuration_tinyinternvl.py",
                                                  submodule_search_locations=[str(out)])
    pkg = importlib.util.module_from_spec(init)
    sys.modules[package] = pkg
    try:
        modules = {}
        for name in ("configuration_tinyinternvl", "modeling_tinyinternvl"):
            spec = importlib.util.spec_from_file_location(f"{package}.{name}", out / f"{name}.py")
            module = importlib.util.module_from_spec(spec)
            sys.modules[spec.name] = module
            spec.loader.exec_module(module)
            modules[name] = module
        config = modules["configuration_tinyinternvl"].TinyInternVLConfig(
            llm_config=llm.to_dict(), image_size=448, num_image_token=4,
            bos_token_id=tokenizer.bos_token_id, eos_token_id=tokenizer.eos_token_id,
            pad_token_id=tokenizer.pad_token_id,
        )
        config.auto_map = {
            "AutoConfig": "configuration_tinyinternvl.TinyInternVLConfig",
            "AutoModel": "modeling_tinyinternvl.TinyInternVLChat",
        }
        _seed()
        model = modules["modeling_tinyinternvl"].TinyInternVLChat(config).eval()
        model.save_pretrained(out)
    finally:
        for name in [m for m in sys.modules if m == package or m.startswith(package + ".")]:
            del sys.modules[name]
    tokenizer.save_pretrained(out)
    return out
