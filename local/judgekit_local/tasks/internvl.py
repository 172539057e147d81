"""``chat`` with ``chat_api: "internvl"``: InternVL-family checkpoints that ship their own code.

InternVL2 checkpoints (and fine-tunes such as MMIE-Score) are not loadable through
``AutoModelForImageTextToText``/``AutoProcessor``: their ``config.json`` maps ``AutoModel`` to the
checkpoint's own modeling code (``auto_map``, so the model needs ``trust_remote_code``), and they
are asked through that code's ``model.chat(tokenizer, pixel_values, question, generation_config,
num_patches_list=[...])``. :mod:`judgekit_local.tasks.chat` dispatches here by the MODEL object's
``chat_api``; it still reads the items (:func:`judgekit_local.tasks.chat.prepare`) and checks the
params.

Images -> ``pixel_values`` (InternVL's dynamic tiling, :func:`tile_image`): an RGB image is
resized (bicubic) to the grid of 448x448 tiles, 1 to ``max_tiles`` of them (MODEL
``max_tiles``, default 12), whose aspect ratio is closest to the image's (on a tie, the larger
grid when the image has more than half its pixels), and cut into those tiles row by row; when
there is more than one, the whole image resized to 448x448 follows as a thumbnail. Every tile is
scaled to [0, 1] and normalised with the ImageNet mean and std. ``pixel_values`` is every image's
tiles in order, ``num_patches_list`` the tile count per image.

Messages -> question (:func:`build_prompt`): each message's parts are joined with newlines.
``<image>`` in the text stands for one image, in order (InternVL's ``chat()`` expands it into
image context tokens): a text that already has as many ``<image>`` placeholders as the item has
images (MMIE's scorer prompt has ``Image-k: <image>`` lines) is kept as it is; a text with none
gets an ``<image>`` line where each image part was; any other count is a bad item. System
messages go to ``model.system_message`` for that item when the model has the attribute (InternVL
has), else before the first question. Earlier user/assistant turns become ``chat()``'s history.

Generation: one item at a time (InternVL's ``batch_chat`` cannot take several images per
question), greedy unless the params sample, ``max_new_tokens`` from the params, and
``torch.manual_seed(seed)`` before each item when the params have a seed (so a sampled reply does
not depend on its batch). ``chat()`` returns only the text: the token counts and the finish reason
come from the model's own ``generate`` call, watched while ``chat()`` runs (InternVL's ``chat()``
calls ``self.generate(pixel_values=..., input_ids=..., attention_mask=..., **generation_config)``,
whose result is the new tokens); a model that does not call it gets its output tokens counted by
re-tokenising the reply, its input tokens from the question's text alone (image tokens not
counted).

InternVL2's shipped code was written for transformers 4.x; where it does not load in the worker's
transformers, run the worker from an environment with a transformers it supports
(``LocalSettings.python``).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import torch

from ._common import BadInput, hf_kwargs, transformers_dtype_kwarg

__all__ = [
    "DEFAULT_MAX_TILES",
    "IMAGENET_MEAN",
    "IMAGENET_STD",
    "TILE_SIZE",
    "InternVLChat",
    "Prompt",
    "build_prompt",
    "check_model",
    "load",
    "pixel_values",
    "run",
    "tile_grid",
    "tile_image",
]

TILE_SIZE = 448
DEFAULT_MAX_TILES = 12
IMAGENET_MEAN = (0.485, 0.456, 0.406)
IMAGENET_STD = (0.229, 0.224, 0.225)
IMAGE_PLACEHOLDER = "<image>"


# -- images -> tiles ---------------------------------------------------------------------------


def _grids(max_tiles: int) -> list[tuple[int, int]]:
    """Every (columns, rows) with 1..max_tiles tiles, fewest tiles first (InternVL's order)."""
    found = {(cols, rows) for n in range(1, max_tiles + 1)
             for cols in range(1, n + 1) for rows in range(1, n + 1) if cols * rows <= max_tiles}
    return sorted(found, key=lambda grid: grid[0] * grid[1])


def tile_grid(width: int, height: int, max_tiles: int = DEFAULT_MAX_TILES,
              tile: int = TILE_SIZE) -> tuple[int, int]:
    """The (columns, rows) grid an image of ``width`` x ``height`` is tiled into.

    The grid's aspect ratio is the closest to the image's; on a tie the larger grid wins when the
    image has more than half the pixels of that grid's tiles."""
    aspect = width / height
    best, best_diff = (1, 1), math.inf
    for cols, rows in _grids(max_tiles):
        diff = abs(aspect - cols / rows)
        if diff < best_diff:
            best, best_diff = (cols, rows), diff
        elif diff == best_diff and width * height > 0.5 * tile * tile * cols * rows:
            best = (cols, rows)
    return best


def tile_image(image: Any, max_tiles: int = DEFAULT_MAX_TILES, tile: int = TILE_SIZE) -> list[Any]:
    """An RGB PIL image -> its tiles (PIL images, ``tile`` x ``tile``), row by row, plus the
    thumbnail when there is more than one tile."""
    from PIL import Image

    bicubic = Image.Resampling.BICUBIC
    cols, rows = tile_grid(image.width, image.height, max_tiles, tile)
    resized = image.resize((cols * tile, rows * tile), bicubic)
    tiles = [resized.crop((c * tile, r * tile, (c + 1) * tile, (r + 1) * tile))
             for r in range(rows) for c in range(cols)]
    if len(tiles) > 1:
        tiles.append(image.resize((tile, tile), bicubic))
    return tiles


def _to_tensor(tile: Any) -> torch.Tensor:
    """A tile -> (3, H, W) float32, scaled to [0, 1] and normalised with the ImageNet mean/std."""
    array = np.asarray(tile.convert("RGB"), dtype=np.float32) / 255.0
    x = torch.from_numpy(array).permute(2, 0, 1)
    mean = torch.tensor(IMAGENET_MEAN, dtype=torch.float32).view(3, 1, 1)
    std = torch.tensor(IMAGENET_STD, dtype=torch.float32).view(3, 1, 1)
    return (x - mean) / std


def pixel_values(images: list, max_tiles: int = DEFAULT_MAX_TILES,
                 tile: int = TILE_SIZE) -> tuple[torch.Tensor | None, list[int]]:
    """Every image's tiles stacked, (tiles, 3, tile, tile) float32, and the count per image;
    ``(None, [])`` without images."""
    stacks, counts = [], []
    for image in images:
        tiles = tile_image(image, max_tiles, tile)
        stacks.extend(_to_tensor(t) for t in tiles)
        counts.append(len(tiles))
    return (torch.stack(stacks) if stacks else None), counts


# -- messages -> question ------------------------------------------------------------------------


class Prompt:
    """One item's question for ``chat()``: ``question``, ``history`` (earlier (question, answer)
    pairs, or None), ``system`` (the system messages' text, or None) and ``images`` in order."""

    __slots__ = ("history", "images", "question", "system")

    def __init__(self, question: str, history: list[tuple[str, str]] | None, system: str | None,
                 images: list) -> None:
        self.question, self.history, self.system, self.images = question, history, system, images


def _join(pieces: list[str]) -> str:
    """Pieces joined by newlines (none added after a piece that ends with one)."""
    out = ""
    for piece in pieces:
        if out and not out.endswith("\n"):
            out += "\n"
        out += piece
    return out


def build_prompt(messages: list[dict]) -> Prompt:
    """Prepared chat messages (role, content parts with PIL images) -> a :class:`Prompt`;
    raises :class:`BadInput` (see the module docstring for the placeholder rule)."""
    images = [p["image"] for m in messages for p in m["content"] if p["type"] == "image"]
    placeholders = sum(p["text"].count(IMAGE_PLACEHOLDER) for m in messages for p in m["content"]
                       if p["type"] == "text")
    if placeholders and placeholders != len(images):
        raise BadInput(f"the text has {placeholders} {IMAGE_PLACEHOLDER} placeholder(s) for {len(images)} "
                       f"image(s): give one per image, in order, or none (then each image becomes an "
                       f"{IMAGE_PLACEHOLDER} line where it is)")
    insert = not placeholders

    system: list[str] = []
    turns: list[list] = []  # [role, text], consecutive messages of one role merged
    for message in messages:
        pieces = []
        for part in message["content"]:
            if part["type"] == "text":
                pieces.append(part["text"])
            elif insert:
                pieces.append(IMAGE_PLACEHOLDER + "\n")
        text = _join(pieces).rstrip("\n") if insert else _join(pieces)
        if message["role"] == "system":
            if any(p["type"] == "image" for p in message["content"]):
                raise BadInput("a system message cannot hold an image")
            system.append(text)
        elif turns and turns[-1][0] == message["role"]:
            turns[-1][1] = _join([turns[-1][1], text])
        else:
            turns.append([message["role"], text])
    if not turns or turns[-1][0] != "user":
        raise BadInput("the last message (besides system ones) must be the user's")
    if turns[0][0] != "user":
        raise BadInput("the conversation must start with a user message (after any system ones)")
    history = [(turns[k][1], turns[k + 1][1]) for k in range(0, len(turns) - 1, 2)]
    return Prompt(turns[-1][1], history or None, _join(system) if system else None, images)


# -- the model -----------------------------------------------------------------------------------


class InternVLChat:
    """An ``AutoModel`` with its own ``chat()`` and its ``AutoTokenizer``."""

    def __init__(self, model_ref: dict, device: str, dtype: torch.dtype) -> None:
        from transformers import AutoModel, AutoTokenizer

        kw = hf_kwargs(model_ref)
        try:
            model = AutoModel.from_pretrained(model_ref["id"], **{transformers_dtype_kwarg(): dtype}, **kw)
        except Exception as exc:
            if kw["trust_remote_code"]:
                raise
            raise RuntimeError(
                f"chat_api 'internvl' loads the checkpoint's own modeling code: set trust_remote_code = "
                f"true in the model's local settings if you trust it ({type(exc).__name__}: {exc})"
            ) from exc
        if not callable(getattr(model, "chat", None)):
            raise RuntimeError(f"{type(model).__name__} has no chat(tokenizer, pixel_values, question, "
                               f"generation_config, ...) method: not an InternVL-family checkpoint "
                               f"(use chat_api 'transformers')")
        self.tokenizer = AutoTokenizer.from_pretrained(model_ref["id"], **kw)
        self.model = model.to(device).eval()
        self.device, self.dtype = device, dtype


def check_model(model: dict) -> None:
    n = model.get("max_tiles", DEFAULT_MAX_TILES)
    if isinstance(n, bool) or not isinstance(n, int) or n < 1:
        raise BadInput(f"model.max_tiles must be a positive integer, got {n!r}")


def load(model: dict, device: str, dtype: torch.dtype) -> InternVLChat:
    return InternVLChat(model, device, dtype)


class _Watch:
    """Wraps the model's ``generate`` while ``chat()`` runs, to see its prompt and new tokens."""

    def __init__(self, model: Any) -> None:
        self.model = model
        self.calls: list[tuple[Any, Any, Any, Any]] = []  # (input_ids, attention_mask, output, eos_token_id)

    def __enter__(self) -> "_Watch":
        original = self.model.generate

        def generate(*args: Any, **kwargs: Any) -> Any:
            out = original(*args, **kwargs)
            self.calls.append((kwargs.get("input_ids"), kwargs.get("attention_mask"), out,
                               kwargs.get("eos_token_id")))
            return out

        self.model.__dict__["generate"] = generate  # shadows the class's method on this object only
        return self

    def __exit__(self, *exc: Any) -> None:
        self.model.__dict__.pop("generate", None)


def _eos_ids(eos: Any, chat: InternVLChat) -> frozenset:
    if eos is None:
        eos = getattr(getattr(chat.model, "generation_config", None), "eos_token_id", None)
    ids = [] if eos is None else [eos] if isinstance(eos, int) else list(eos)
    if chat.tokenizer.eos_token_id is not None:
        ids.append(chat.tokenizer.eos_token_id)
    return frozenset(int(i) for i in ids)


def _one(chat: InternVLChat, prompt: Prompt, params: dict, max_tiles: int) -> dict:
    from .chat import split_generation

    pixels, counts = pixel_values(prompt.images, max_tiles)
    if pixels is not None:
        pixels = pixels.to(chat.device, chat.dtype)
    gen: dict[str, Any] = {"max_new_tokens": params["max_new_tokens"], "do_sample": params["do_sample"]}
    if params["do_sample"]:
        for key in ("temperature", "top_p"):
            if params.get(key) is not None:
                gen[key] = params[key]
    question, history = prompt.question, prompt.history
    model = chat.model
    use_attr = prompt.system is not None and hasattr(model, "system_message")
    if prompt.system is not None and not use_attr:
        if history:
            history = [(_join([prompt.system, history[0][0]]), history[0][1]), *history[1:]]
        else:
            question = _join([prompt.system, question])
    if params.get("seed") is not None:
        torch.manual_seed(params["seed"])
    saved = model.system_message if use_attr else None
    try:
        if use_attr:
            model.system_message = prompt.system
        with _Watch(model) as watch:
            text = model.chat(chat.tokenizer, pixels, question, gen, num_patches_list=counts,
                              history=history, return_history=False)
    finally:
        if use_attr:
            model.system_message = saved
    if isinstance(text, tuple):  # a chat() that returns (response, history) anyway
        text = text[0]
    text = str(text)
    if len(watch.calls) == 1:
        input_ids, mask, out, eos = watch.calls[0]
        sequences = getattr(out, "sequences", out)
        row = sequences[0].tolist()
        prompt_ids = input_ids[0].tolist() if input_ids is not None else []
        if prompt_ids and row[:len(prompt_ids)] == prompt_ids:
            row = row[len(prompt_ids):]  # a generate that returns the prompt too
        _, n_out, finish = split_generation(row, _eos_ids(eos, chat), params["max_new_tokens"])
        if mask is not None:
            n_in = int(mask[0].sum())
        else:
            n_in = int(input_ids.shape[1]) if input_ids is not None else 0
    else:  # no (or several) generate calls seen: count the text
        n_out = len(chat.tokenizer(text, add_special_tokens=False)["input_ids"])
        finish = "length" if n_out >= params["max_new_tokens"] else "stop"
        n_in = len(chat.tokenizer(question)["input_ids"])
    return {"text": text, "input_tokens": n_in, "output_tokens": n_out, "finish_reason": finish}


class _BadItemInBatch(RuntimeError):
    """One item of several is bad: the worker retries them one at a time, so that it fails alone."""


@torch.inference_mode()
def run(chat: InternVLChat, prepared: list, params: dict, model: dict, store) -> list[dict]:
    prompts = []
    for k, messages in enumerate(prepared):
        try:
            prompts.append(build_prompt(messages))
        except BadInput as exc:
            if len(prepared) == 1:
                raise
            raise _BadItemInBatch(f"item {k} of {len(prepared)}: {exc}") from exc
    max_tiles = model.get("max_tiles", DEFAULT_MAX_TILES)
    return [_one(chat, prompt, params, max_tiles) for prompt in prompts]
