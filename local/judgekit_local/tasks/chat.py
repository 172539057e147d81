"""``chat``: open VLMs through ``AutoModelForImageTextToText`` and ``AutoProcessor``.

The MODEL object's ``chat_api`` picks how the model is loaded and asked: ``"transformers"`` (the
default, this module) or ``"internvl"`` (checkpoints with their own ``chat()``, such as
InternVL2 and MMIE-Score: :mod:`judgekit_local.tasks.internvl`, which takes ``max_tiles``). Both
read the items and check the params here; the loaded models are cached apart.

Each item's messages are rendered by the processor's own chat template (images and text in
their order; an image part ``{"type": "image", "sha256": ...}`` becomes a PIL image), with the
generation prompt added. A batch is padded on the left and generated in one ``generate`` call.

Params:

- ``max_new_tokens`` (default 512);
- ``do_sample`` (default false: greedy decoding, ``temperature``/``top_p`` ignored;
  ``temperature`` 0 also means greedy);
- ``temperature``, ``top_p``: sampling settings (unset ones keep the model's generation config);
- ``seed``: with sampling, ``torch.manual_seed(seed)`` once before each ``generate`` call. The
  seed is per batch, so a sampled reply depends on which items shared its batch (and on an
  out-of-memory split); greedy replies do not.

Output: ``text`` (the new tokens decoded, special tokens skipped), ``input_tokens`` (the
item's prompt tokens after image placeholders were expanded, padding excluded),
``output_tokens`` (new tokens up to and including the end-of-sequence token) and
``finish_reason``: ``"stop"`` when an end-of-sequence token came, ``"length"`` when
``max_new_tokens`` ran out first.
"""

from __future__ import annotations

import inspect
from typing import Any

import torch

from ._common import BadInput, hf_kwargs, load_image, transformers_dtype_kwarg

ROLES = ("system", "user", "assistant")
DEFAULT_MAX_NEW_TOKENS = 512
CHAT_APIS = ("transformers", "internvl")


def _api(model: dict) -> str:
    return model.get("chat_api") or "transformers"


def _internvl():
    from . import internvl

    return internvl


class ChatModel:
    def __init__(self, model_ref: dict, device: str, dtype: torch.dtype) -> None:
        from transformers import AutoModelForImageTextToText, AutoProcessor

        kw = hf_kwargs(model_ref)
        self.processor = AutoProcessor.from_pretrained(model_ref["id"], **kw)
        self.tokenizer = getattr(self.processor, "tokenizer", self.processor)
        self.tokenizer.padding_side = "left"
        self.model = AutoModelForImageTextToText.from_pretrained(
            model_ref["id"], **{transformers_dtype_kwarg(): dtype}, **kw
        )
        self.model.to(device).eval()
        self.device, self.dtype = device, dtype
        # transformers 5 takes processor arguments in processor_kwargs; 4.x took them as **kwargs.
        takes = inspect.signature(self.processor.apply_chat_template).parameters
        padding = {"padding": True}
        self.template_kwargs = {"processor_kwargs": padding} if "processor_kwargs" in takes else padding
        eos = self.model.generation_config.eos_token_id
        eos = [] if eos is None else [eos] if isinstance(eos, int) else list(eos)
        if self.tokenizer.eos_token_id is not None:
            eos.append(self.tokenizer.eos_token_id)
        self.eos_ids = frozenset(eos)
        pad = self.model.generation_config.pad_token_id
        self.pad_id = pad if pad is not None else self.tokenizer.pad_token_id
        if self.pad_id is None and eos:
            self.pad_id = eos[0]


def check_model(model: dict) -> None:
    api = _api(model)
    if api not in CHAT_APIS:
        raise BadInput(f"model.chat_api must be one of {', '.join(CHAT_APIS)}, got {api!r}")
    if api == "internvl":
        _internvl().check_model(model)


def check_params(params: dict) -> dict:
    p = dict(params or {})
    n = p.get("max_new_tokens")
    if n is None:
        p["max_new_tokens"] = DEFAULT_MAX_NEW_TOKENS
    elif isinstance(n, bool) or not isinstance(n, int) or n <= 0:
        raise BadInput(f"params.max_new_tokens must be a positive integer, got {n!r}")
    p["do_sample"] = bool(p.get("do_sample") or False)
    for key in ("temperature", "top_p"):
        v = p.get(key)
        if v is not None and (isinstance(v, bool) or not isinstance(v, (int, float)) or v < 0):
            raise BadInput(f"params.{key} must be a non-negative number, got {v!r}")
    if p["do_sample"] and p.get("temperature") == 0:
        p["do_sample"] = False  # temperature 0 means greedy, as with the APIs
    seed = p.get("seed")
    if seed is not None and (isinstance(seed, bool) or not isinstance(seed, int)):
        raise BadInput(f"params.seed must be an integer, got {seed!r}")
    return p


def load_key(model: dict) -> tuple:
    return (_api(model),)


def load(model: dict, device: str, dtype: torch.dtype) -> Any:
    if _api(model) == "internvl":
        return _internvl().load(model, device, dtype)
    return ChatModel(model, device, dtype)


def prepare(inputs: dict, store) -> list[dict]:
    messages = inputs.get("messages") if isinstance(inputs, dict) else None
    if not isinstance(messages, list) or not messages:
        raise BadInput("chat inputs must be {\"messages\": [...]} with at least one message")
    out = []
    for i, message in enumerate(messages):
        if not isinstance(message, dict) or message.get("role") not in ROLES:
            raise BadInput(f"messages[{i}]: role must be one of {', '.join(ROLES)}")
        content = message.get("content")
        if isinstance(content, str):
            content = [{"type": "text", "text": content}]
        if not isinstance(content, list):
            raise BadInput(f"messages[{i}].content must be a list of parts or a string")
        parts = []
        for j, part in enumerate(content):
            kind = part.get("type") if isinstance(part, dict) else None
            if kind == "text" and isinstance(part.get("text"), str):
                parts.append({"type": "text", "text": part["text"]})
            elif kind == "image":
                parts.append({"type": "image", "image": load_image(part, store)})
            else:
                raise BadInput(f"messages[{i}].content[{j}]: expected a text or image part")
        out.append({"role": message["role"], "content": parts})
    return out


def split_generation(tokens: list[int], eos_ids: frozenset, max_new_tokens: int) -> tuple[list[int], int, str]:
    """(content tokens, output token count, finish_reason) of one generated row."""
    for k, tok in enumerate(tokens):
        if tok in eos_ids:
            return tokens[:k], k + 1, "stop"
    return tokens, len(tokens), "length" if len(tokens) >= max_new_tokens else "stop"


def run(chat: Any, prepared: list, params: dict, model: dict, store) -> list[dict]:
    if _api(model) == "internvl":
        return _internvl().run(chat, prepared, params, model, store)
    return _run_transformers(chat, prepared, params)


@torch.inference_mode()
def _run_transformers(chat: ChatModel, prepared: list, params: dict) -> list[dict]:
    # apply_chat_template rewrites message contents: give it fresh lists every call.
    conversations = [[{"role": m["role"], "content": list(m["content"])} for m in c] for c in prepared]
    inputs = chat.processor.apply_chat_template(
        conversations,
        add_generation_prompt=True,
        tokenize=True,
        return_dict=True,
        return_tensors="pt",
        **chat.template_kwargs,
    )
    inputs = inputs.to(chat.device)
    for key, value in list(inputs.items()):  # pixel values and the like: the model's dtype
        if isinstance(value, torch.Tensor) and value.is_floating_point():
            inputs[key] = value.to(chat.dtype)
    gen: dict[str, Any] = {"max_new_tokens": params["max_new_tokens"], "do_sample": params["do_sample"]}
    if params["do_sample"]:
        for key in ("temperature", "top_p"):
            if params.get(key) is not None:
                gen[key] = params[key]
        if params.get("seed") is not None:
            torch.manual_seed(params["seed"])
    if chat.pad_id is not None:
        gen["pad_token_id"] = chat.pad_id
    sequences = chat.model.generate(**inputs, **gen)
    prompt_len = inputs["input_ids"].shape[1]
    new_tokens = sequences[:, prompt_len:].tolist()
    mask = inputs.get("attention_mask")
    outputs = []
    for i, row in enumerate(new_tokens):
        content, n_out, finish = split_generation(row, chat.eos_ids, params["max_new_tokens"])
        n_in = int(mask[i].sum()) if mask is not None else prompt_len
        text = chat.tokenizer.decode(content, skip_special_tokens=True)
        outputs.append({"text": text, "input_tokens": n_in, "output_tokens": n_out, "finish_reason": finish})
    return outputs
