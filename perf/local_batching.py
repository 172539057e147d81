"""Local models: images/s batched vs one at a time.

CPU (the default): ``embed_image`` with the tiny CLIP encoder of ``judgekit_local.testing``
(32 px input, 2 layers, random weights) on N distinct PNGs, at batch size 1 (one at a time) and
8/32/64, measured two ways in the same run, in alternating rounds:

1. ``WorkerCore`` directly, in this process (what batching buys the model);
2. end to end: ``Batcher`` + ``SubprocessBackend`` + the worker process (JSON lines over the
   pipes, images and vectors through the blob store), every item submitted at once as the engine
   does, so the protocol's per-batch cost is included.  Batch size 1 there is the same pipeline
   with ``batch_size = 1``: one batch in flight at a time, the queue always full.

Target: batched >= 5x one at a time on CPU with the tiny encoder.

``--cuda`` measures the same two ways on CUDA with real-sized models, random weights:

- a CLIP ViT-L/14 vision tower with its projection (24 layers, width 1024, 224 px, ~304 M
  parameters), ``embed_image``, bf16;
- a Stable Diffusion 1.x-layout pipeline at half width (UNet channels 160/320/640/640, two
  layers per block, cross-attention 512, ~220 M parameters; VAE channels 64/128/256/256; a
  6-layer CLIP text encoder of width 512), ``text_to_image`` at 256x256 with 20 DDIM steps and
  guidance 7.5, fp16 -- an SD-1.5-sized UNet would give the same picture, slower.

Prints each round, then the medians and the ratios; no figure is asserted.

    .venv/bin/python perf/local_batching.py [--images 256] [--rounds 5] [--sizes 8,32,64]
    .venv/bin/python perf/local_batching.py --cuda [--rounds 3]
"""

from __future__ import annotations

import argparse
import asyncio
import io
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

from judgekit.blobs import BlobStore  # noqa: E402
from judgekit.local import Batcher, SubprocessBackend  # noqa: E402

WORKER = [sys.executable, "-m", "judgekit_local"]


# -- inputs and models ---------------------------------------------------------------------------
def put_images(store: BlobStore, n: int, size: tuple[int, int], seed: int = 0) -> list[dict]:
    """n distinct random-noise PNGs of ``size`` (w, h) in the store, as item inputs."""
    import numpy as np
    from PIL import Image

    rng = np.random.default_rng(seed)
    out = []
    for _ in range(n):
        buf = io.BytesIO()
        Image.fromarray(rng.integers(0, 256, (size[1], size[0], 3), dtype=np.uint8)).save(buf, format="PNG")
        out.append({"image": {"sha256": store.put(buf.getvalue(), "image/png")}})
    return out


def prompts(n: int) -> list[dict]:
    subjects = ["a red cube", "a cat on a sofa", "a lighthouse at dusk", "a bowl of fruit", "a city street"]
    return [{"prompt": f"{subjects[i % len(subjects)]}, picture {i}", "negative_prompt": None, "seed": 1000 + i}
            for i in range(n)]


def embed_ref(path: Path, dtype: str) -> dict:
    return {"id": str(path), "revision": None, "dtype": dtype, "trust_remote_code": False,
            "encoder": "transformers", "pooling": "auto"}


def build_vit_l14(out: Path) -> Path:
    """CLIP ViT-L/14 (224 px) vision tower + projection, random weights, saved in fp16."""
    import torch
    from transformers import CLIPImageProcessor, CLIPVisionConfig, CLIPVisionModelWithProjection

    torch.manual_seed(0)
    config = CLIPVisionConfig(hidden_size=1024, intermediate_size=4096, num_hidden_layers=24,
                              num_attention_heads=16, patch_size=14, image_size=224, projection_dim=768,
                              hidden_act="quick_gelu")
    model = CLIPVisionModelWithProjection(config).to(torch.float16).eval()
    model.save_pretrained(out)
    CLIPImageProcessor(size={"shortest_edge": 224}, crop_size={"height": 224, "width": 224}).save_pretrained(out)
    n = sum(p.numel() for p in model.parameters())
    print(f"built CLIP ViT-L/14 vision + projection: {n / 1e6:.0f} M parameters")
    return out


def build_half_sd(out: Path) -> Path:
    """An SD-1.x-layout pipeline at half width, random weights, fp16 (see the docstring)."""
    import torch
    from diffusers import AutoencoderKL, DDIMScheduler, StableDiffusionPipeline, UNet2DConditionModel
    from judgekit_local.testing import build_tiny_diffusion
    from transformers import CLIPTextConfig, CLIPTextModel, CLIPTokenizer

    tiny = build_tiny_diffusion(out.parent / "tiny-sd")  # for its tokenizer and scheduler
    tokenizer = CLIPTokenizer.from_pretrained(tiny / "tokenizer", model_max_length=77)
    scheduler = DDIMScheduler.from_pretrained(tiny / "scheduler")
    torch.manual_seed(0)
    down = ("CrossAttnDownBlock2D", "CrossAttnDownBlock2D", "CrossAttnDownBlock2D", "DownBlock2D")
    up = ("UpBlock2D", "CrossAttnUpBlock2D", "CrossAttnUpBlock2D", "CrossAttnUpBlock2D")
    unet = UNet2DConditionModel(sample_size=32, in_channels=4, out_channels=4, layers_per_block=2,
                                block_out_channels=(160, 320, 640, 640), down_block_types=down,
                                up_block_types=up, cross_attention_dim=512, attention_head_dim=8)
    vae = AutoencoderKL(in_channels=3, out_channels=3, latent_channels=4, layers_per_block=2,
                        block_out_channels=(64, 128, 256, 256),
                        down_block_types=("DownEncoderBlock2D",) * 4, up_block_types=("UpDecoderBlock2D",) * 4,
                        sample_size=256)
    text = CLIPTextModel(CLIPTextConfig(vocab_size=len(tokenizer), hidden_size=512, intermediate_size=2048,
                                        num_hidden_layers=6, num_attention_heads=8, max_position_embeddings=77,
                                        bos_token_id=tokenizer.bos_token_id, eos_token_id=tokenizer.eos_token_id,
                                        pad_token_id=tokenizer.pad_token_id))
    pipe = StableDiffusionPipeline(vae=vae, text_encoder=text, tokenizer=tokenizer, unet=unet, scheduler=scheduler,
                                   safety_checker=None, feature_extractor=None, requires_safety_checker=False)
    pipe.to(torch.float16).save_pretrained(out)
    n = sum(p.numel() for p in unet.parameters())
    print(f"built half-width SD-1.x pipeline: UNet {n / 1e6:.0f} M parameters")
    return out


# -- the two ways of running --------------------------------------------------------------------
def direct(core, task: str, model: dict, params: dict, inputs: list[dict], size: int) -> float:
    """Items/s through ``WorkerCore.run_batch`` in batches of ``size``."""
    failed = []

    def emit(msg: dict) -> None:
        if msg.get("type") == "result" and not msg.get("ok"):
            failed.append(msg)

    t0 = time.perf_counter()
    for k in range(0, len(inputs), size):
        chunk = inputs[k:k + size]
        core.run_batch({"op": "batch", "batch_id": f"d{k}", "task": task, "model": model, "params": params,
                        "items": [{"item_id": f"i{k + j}", "inputs": inp} for j, inp in enumerate(chunk)]}, emit)
    dt = time.perf_counter() - t0
    assert not failed, failed[:2]
    return len(inputs) / dt


async def end_to_end(backend, task: str, model: dict, params: dict, inputs: list[dict], size: int) -> float:
    """Items/s through a Batcher (``batch_size = size``) and the worker process."""
    batcher = Batcher(backend, batch_size=size, max_wait_ms=2)
    try:
        t0 = time.perf_counter()
        outs = await asyncio.gather(*(batcher.submit(task, model, params, inp) for inp in inputs))
        dt = time.perf_counter() - t0
    finally:
        await batcher.close()
    assert len(outs) == len(inputs) and batcher.items_failed == 0
    return len(inputs) / dt


async def measure(title: str, device: str, task: str, model: dict, params: dict, inputs: list[dict],
                  store: Path, sizes: list[int], rounds: int) -> None:
    from judgekit_local.worker import WorkerCore

    core = WorkerCore(store, device=device)
    backend = SubprocessBackend(WORKER, store=store, device=device)
    await backend.start()
    all_sizes = [1, *sizes]
    try:
        # warm-up: load the model on both sides, write every output once
        for s in all_sizes:
            direct(core, task, model, params, inputs, s)
        for s in all_sizes:
            await end_to_end(backend, task, model, params, inputs, s)
        figures: dict[tuple[str, int], list[float]] = {}
        print(f"\n{title}: {len(inputs)} items per measurement, items/s per round")
        for r in range(rounds):
            order = all_sizes if r % 2 == 0 else all_sizes[::-1]  # alternate, so no size always goes first
            row = []
            for s in order:
                d = direct(core, task, model, params, inputs, s)
                e = await end_to_end(backend, task, model, params, inputs, s)
                figures.setdefault(("direct", s), []).append(d)
                figures.setdefault(("e2e", s), []).append(e)
                row.append(f"b{s}: {d:,.0f} / {e:,.0f}")
            print(f"  round {r + 1} (WorkerCore / end to end)  " + "  ".join(row))
    finally:
        await backend.close()
        core.unload_all()
    med = {k: statistics.median(v) for k, v in figures.items()}
    print(f"\n{title}: median of {rounds} rounds")
    print(f"  {'batch size':>18} | {'WorkerCore /s':>13} | {'x one':>6} | {'end to end /s':>13} | {'x one':>6}")
    for s in all_sizes:
        label = "1 (one at a time)" if s == 1 else str(s)
        print(f"  {label:>18} | {med['direct', s]:>13,.1f} | {med['direct', s] / med['direct', 1]:>5.1f}x | "
              f"{med['e2e', s]:>13,.1f} | {med['e2e', s] / med['e2e', 1]:>5.1f}x")
    best = max(sizes)
    print(f"  batched (size {best}) / one at a time: WorkerCore {med['direct', best] / med['direct', 1]:.1f}x, "
          f"end to end {med['e2e', best] / med['e2e', 1]:.1f}x; end to end / WorkerCore at size {best}: "
          f"{med['e2e', best] / med['direct', best]:.2f}, at size 1: {med['e2e', 1] / med['direct', 1]:.2f}")


async def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--images", type=int, default=None, help="items per measurement (cpu 256, cuda 512)")
    ap.add_argument("--rounds", type=int, default=None, help="alternating rounds (cpu 5, cuda 3)")
    ap.add_argument("--sizes", default="8,32,64", help="batch sizes compared with 1 (embed_image)")
    ap.add_argument("--cuda", action="store_true", help="real-sized models on CUDA instead of the tiny CPU one")
    ap.add_argument("--t2i-images", type=int, default=32, help="--cuda: prompts per text_to_image measurement")
    ap.add_argument("--t2i-sizes", default="4,8,16", help="--cuda: text_to_image batch sizes compared with 1")
    args = ap.parse_args()
    sizes = [int(s) for s in args.sizes.split(",")]

    with tempfile.TemporaryDirectory(prefix="jk-local-perf-") as tmp:
        tmp_path = Path(tmp)
        store = tmp_path / "blobs"
        blobs = BlobStore(store)
        if not args.cuda:
            import torch
            from judgekit_local.testing import build_tiny_clip

            n, rounds = args.images or 256, args.rounds or 5
            clip = build_tiny_clip(tmp_path / "tiny-clip")
            inputs = put_images(blobs, n, (64, 48))
            print(f"cpu: {os.cpu_count()} cores, torch {torch.__version__} ({torch.get_num_threads()} threads); "
                  f"images 64x48 PNG, random noise")
            await measure("embed_image, tiny CLIP, cpu", "cpu", "embed_image", embed_ref(clip, "fp32"), {},
                          inputs, store, sizes, rounds)
            return

        import torch

        if not torch.cuda.is_available():
            raise SystemExit("--cuda: torch sees no CUDA device")
        n, rounds = args.images or 512, args.rounds or 3
        print(f"cuda: {torch.cuda.get_device_name(0)}, torch {torch.__version__}")
        vit = build_vit_l14(tmp_path / "clip-vit-l14")
        inputs = put_images(blobs, n, (320, 240))
        await measure("embed_image, CLIP ViT-L/14 (random weights), cuda, bf16", "cuda", "embed_image",
                      embed_ref(vit, "bf16"), {}, inputs, store, sizes, rounds)
        sd = build_half_sd(tmp_path / "half-sd")
        t2i_model = {"id": str(sd), "revision": None, "dtype": "fp16", "trust_remote_code": False,
                     "pipeline": "auto"}
        t2i_params = {"steps": 20, "guidance": 7.5, "width": 256, "height": 256}
        await measure("text_to_image, half-width SD-1.x (random weights), cuda, fp16, 256x256, 20 steps", "cuda",
                      "text_to_image", t2i_model, t2i_params, prompts(args.t2i_images), store,
                      [int(s) for s in args.t2i_sizes.split(",")], rounds)


if __name__ == "__main__":
    asyncio.run(main())
