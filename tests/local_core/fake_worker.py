"""A stand-in for ``python -m judgekit_local``: speaks protocol 1 with no torch, for the core's tests.

    python fake_worker.py --store DIR [--device D] [--memory-budget-gb N]

- ``embed_image``: an 8-float vector made from the input image's sha256, written as ``.f32``;
- ``text_to_image``: a small PNG drawn with Pillow (colour from the seed), written as ``.png``;
- ``chat``: echoes the last message's text (``echo: ...``), words as tokens.

Environment knobs:

- ``FAKE_CRASH_AFTER=N``: ``os._exit(17)`` after sending N results (in this process);
  with ``FAKE_CRASH_TIMES=K`` and ``FAKE_CRASH_STATE=FILE`` only the first K processes crash;
- ``FAKE_DELAY_S=S``: sleep S seconds per item;
- ``FAKE_LOAD_FAIL=TEXT``: models whose id contains TEXT fail to load (``*``: every model);
- ``FAKE_LOG=FILE``: append one JSON line per batch received (and one per start);
- ``FAKE_PROTOCOL=N``: the protocol version the hello announces;
- ``FAKE_STORE=DIR``: images and vectors are written there, not into ``--store`` (a node where
  another folder is mounted at the store's path);
- ``FAKE_CORE_FAIL=TEXT``: the in-process core cannot be built (raises TEXT).
"""

from __future__ import annotations

import argparse
import hashlib
import io
import json
import os
import struct
import sys
import tempfile
import time

OUT = sys.stdout


def send(msg: dict) -> None:
    OUT.write(json.dumps(msg) + "\n")
    OUT.flush()


def put(store: str, data: bytes, ext: str) -> str:
    store = os.environ.get("FAKE_STORE") or store
    sha = hashlib.sha256(data).hexdigest()
    folder = os.path.join(store, sha[:2])
    os.makedirs(folder, exist_ok=True)
    target = os.path.join(folder, sha + ext)
    if not os.path.exists(target):
        fd, tmp = tempfile.mkstemp(dir=folder, suffix=".tmp")
        with os.fdopen(fd, "wb") as f:
            f.write(data)
        os.replace(tmp, target)
    return sha


def has(store: str, sha: str) -> bool:
    folder = os.path.join(store, sha[:2])
    return os.path.isdir(folder) and any(n.startswith(sha) and not n.endswith(".tmp") for n in os.listdir(folder))


def log(entry: dict) -> None:
    path = os.environ.get("FAKE_LOG")
    if path:
        with open(path, "a", encoding="utf-8") as f:
            f.write(json.dumps(dict(entry, pid=os.getpid(), t=time.time())) + "\n")


class Fake:
    def __init__(self, store: str, emit=send) -> None:
        self.store = store
        self.emit = emit
        self.results = 0
        self.loaded: set[str] = set()
        self.crash_after = int(os.environ["FAKE_CRASH_AFTER"]) if os.environ.get("FAKE_CRASH_AFTER") else None
        if self.crash_after is not None and os.environ.get("FAKE_CRASH_TIMES"):
            state = os.environ["FAKE_CRASH_STATE"]
            crashed = int(open(state).read() or 0) if os.path.exists(state) else 0
            if crashed >= int(os.environ["FAKE_CRASH_TIMES"]):
                self.crash_after = None

    def crash_if_due(self) -> None:
        if self.crash_after is not None and self.results >= self.crash_after:
            state = os.environ.get("FAKE_CRASH_STATE")
            if state:
                crashed = int(open(state).read() or 0) if os.path.exists(state) else 0
                with open(state, "w") as f:
                    f.write(str(crashed + 1))
            print(f"fake worker: crashing on purpose after {self.results} results", file=sys.stderr, flush=True)
            os._exit(17)

    def run(self, batch: dict) -> None:
        bid, task, model, params = batch["batch_id"], batch["task"], batch["model"], batch["params"]
        items = batch["items"]
        log({"event": "batch", "batch_id": bid, "task": task, "model": model["id"], "params": params,
             "item_ids": [it["item_id"] for it in items], "n": len(items)})
        self.crash_if_due()  # FAKE_CRASH_AFTER=0: dies on every batch before any result
        fail = os.environ.get("FAKE_LOAD_FAIL")
        if model["id"] not in self.loaded:
            self.emit({"type": "progress", "batch_id": bid, "phase": "loading", "model": model["id"], "done": 0,
                  "total": 1, "message": "loading weights"})
            print(f"fake worker: loading {model['id']}", file=sys.stderr, flush=True)
            if fail and (fail == "*" or fail in model["id"]):
                for it in items:
                    self.emit({"type": "result", "batch_id": bid, "item_id": it["item_id"], "ok": False,
                          "error": f"{model['id']} is not a model I know", "error_kind": "load_failed"})
                self.emit({"type": "batch_done", "batch_id": bid})
                return
            self.loaded.add(model["id"])
        delay = float(os.environ.get("FAKE_DELAY_S") or 0)
        for n, it in enumerate(items, 1):
            if delay:
                time.sleep(delay)
            t0 = time.perf_counter()
            try:
                output = getattr(self, task)(params, it["inputs"], model)
                msg = {"type": "result", "batch_id": bid, "item_id": it["item_id"], "ok": True, "output": output}
            except Failure as e:
                msg = {"type": "result", "batch_id": bid, "item_id": it["item_id"], "ok": False,
                       "error": str(e), "error_kind": e.kind}
            msg["latency_s"] = time.perf_counter() - t0
            self.emit(msg)
            self.results += 1
            self.emit({"type": "progress", "batch_id": bid, "phase": "running", "model": model["id"], "done": n,
                  "total": len(items)})
            self.crash_if_due()
        self.emit({"type": "batch_done", "batch_id": bid})

    def chat(self, params: dict, inputs: dict, model: dict) -> dict:
        messages = inputs["messages"]
        words_in = 0
        images = 0
        for m in messages:
            for part in m["content"]:
                if part["type"] == "text":
                    words_in += len(part["text"].split())
                else:
                    if not has(self.store, part["sha256"]):
                        raise Failure("bad_input", f"no image {part['sha256'][:12]} in the store")
                    images += 1
        last = "".join(p.get("text", "") for p in messages[-1]["content"] if p["type"] == "text")
        words = ("echo: " + last + (f" [images: {images}]" if images else "")).split()
        finish = "stop"
        if len(words) > params["max_new_tokens"]:
            words, finish = words[: params["max_new_tokens"]], "length"
        return {"text": " ".join(words), "input_tokens": words_in + images, "output_tokens": len(words),
                "finish_reason": finish}

    def text_to_image(self, params: dict, inputs: dict, model: dict) -> dict:
        from PIL import Image

        if "OOM" in inputs["prompt"]:
            raise Failure("oom", "CUDA out of memory (pretend)")
        w, h = int(params.get("width", 16)), int(params.get("height", 16))
        seed = int(inputs["seed"])
        im = Image.new("RGB", (w, h), ((seed * 37) % 256, (seed * 91) % 256, len(inputs["prompt"]) % 256))
        buf = io.BytesIO()
        im.save(buf, format="PNG")
        sha = put(self.store, buf.getvalue(), ".png")
        return {"image": {"sha256": sha, "mime": "image/png", "width": w, "height": h}}

    def embed_image(self, params: dict, inputs: dict, model: dict) -> dict:
        sha = inputs["image"]["sha256"]
        if not has(self.store, sha):
            raise Failure("bad_input", f"no image {sha[:12]} in the store")
        digest = hashlib.sha256(sha.encode()).digest()
        values = [b / 255.0 for b in digest[:8]]
        vsha = put(self.store, struct.pack("<8f", *values), ".f32")
        return {"vector": {"sha256": vsha, "dim": 8, "dtype": "float32"}, "encoder": f"fake:{model['id']}"}


class Failure(Exception):
    def __init__(self, kind: str, message: str) -> None:
        super().__init__(message)
        self.kind = kind


class FakeCore:
    """The same fake as an in-process core, the shape of ``judgekit_local.worker.WorkerCore``
    (``hello()``, ``run_batch(batch, emit)``), for the Ray backend's tests."""

    def __init__(self, store, device: str = "auto", memory_budget_gb: float | None = None) -> None:
        if os.environ.get("FAKE_CORE_FAIL"):  # a core that cannot start (as a missing package would)
            raise RuntimeError(os.environ["FAKE_CORE_FAIL"])
        self.device = "cpu" if device == "auto" else device
        self.fake = Fake(str(store))
        log({"event": "start", "argv": ["--store", str(store), "--device", device]})

    def hello(self) -> dict:
        return {"type": "hello", "protocol": int(os.environ.get("FAKE_PROTOCOL") or 1), "worker": "fake-core 0.0.1",
                "pid": os.getpid(), "device": self.device}

    def run_batch(self, batch: dict, emit) -> None:
        self.fake.emit = emit
        self.fake.run(batch)


def main() -> None:
    sys.stdout = sys.stderr  # as the real worker: stray prints must not corrupt the protocol
    ap = argparse.ArgumentParser()
    ap.add_argument("--store", required=True)
    ap.add_argument("--device", default="auto")
    ap.add_argument("--memory-budget-gb", type=float)
    ap.add_argument("--threads", type=int)
    args = ap.parse_args()
    device = "cpu" if args.device == "auto" else args.device
    log({"event": "start", "argv": sys.argv[1:]})
    send({"type": "hello", "protocol": int(os.environ.get("FAKE_PROTOCOL") or 1), "worker": "fake-worker 0.0.1",
          "pid": os.getpid(), "device": device, "torch": None, "transformers": None, "diffusers": None})
    fake = Fake(args.store)
    while True:
        line = sys.stdin.readline()
        if not line:
            return  # EOF: shutdown
        msg = json.loads(line)
        if msg.get("op") == "shutdown":
            return
        if msg.get("op") == "batch":
            fake.run(msg)


if __name__ == "__main__":
    main()
