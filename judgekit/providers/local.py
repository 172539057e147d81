"""Local models (``provider = "local"``): a worker process with torch runs them in batches.

The core never imports torch.  :class:`LocalProvider` turns a :class:`~judgekit.types.ChatRequest`
into one item of the worker protocol (``local/PROTOCOL.md``) and hands it to a shared
:class:`~judgekit.local.Batcher`; images go by sha256 through the run's blob store.  Aliases whose
worker settings agree (command, device, memory budget, backend) share one worker and one batcher:
:func:`acquire_runtime` / :func:`release_runtime`.

Per task (``local.task``):

- ``chat``: the messages; ``max_tokens`` -> ``max_new_tokens`` (default
  :data:`DEFAULT_MAX_NEW_TOKENS`), temperature 0 or unset -> greedy, ``top_p``, ``seed``; ``extra``
  goes to the worker's params as is.  The response is the text with token usage.
- ``text_to_image``: the prompt is the last message's text; ``seed`` is required; ``steps``,
  ``guidance``, ``width``, ``height``, ``negative_prompt`` come from ``params.extra``, else the
  spec's ``local`` settings, else the preset.  The response's text is JSON: ``{"image": {"sha256",
  "mime", "width", "height"}, "seed", "steps", "guidance", "width", "height", "negative_prompt"}``
  (``null``: the pipeline's default); the image is in the blob store.
- ``embed_image``: the request's one image.  The response's text is JSON ``{"vector": {"sha256",
  "dim", "dtype"}, "encoder"}``; :func:`judgekit.local.read_vector` reads the vector back.

Item failures are ProviderErrors: ``bad_input``, ``load_failed``, ``oom`` and worker errors are
:class:`~judgekit.errors.BadRequest` (the item fails, no retry); a worker that died under the item
more than ``max_restarts`` times, a Ray backend with no live actor for ``no_worker_timeout_s``
(``unavailable``) and an image or vector the worker reported but this machine's store lacks (a
node that does not share the store) are :class:`~judgekit.errors.TransientError`: the item fails
uncached and a rerun asks it again; a worker that cannot
start at all (no such Python, ``judgekit_local`` not installed, another protocol) is
:class:`~judgekit.errors.NotFound`, which stops the run with the reason.

``JUDGEKIT_LOCAL_WORKER``, when set, is the command run instead of ``<python> -m judgekit_local``
(a wrapper, a container, a test double); the worker arguments are appended to it.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import os
import shlex
import sys
import time
from dataclasses import dataclass, field
from typing import Any

from ..errors import BadRequest, NotFound, ProviderError, TransientError
from ..local import Backend, Batcher, LocalItemError, SubprocessBackend
from ..local.presets import PRESETS, Preset
from ..local.process import DEFAULT_MODULE, WORKER_PACKAGE, install_command
from ..types import ChatRequest, ChatResponse, ImagePart, TextPart, Usage
from .replies import reply_text, sha256_at, short_string, token_count
from .base import Provider

__all__ = ["LocalProvider", "acquire_runtime", "release_runtime", "running_runtimes", "worker_command",
           "DEFAULT_MAX_NEW_TOKENS", "WORKER_ENV"]

#: ``max_new_tokens`` of a chat call whose params set no ``max_tokens`` (part of every such key)
DEFAULT_MAX_NEW_TOKENS = 1024
#: env var: a command to run instead of ``<python> -m judgekit_local``
WORKER_ENV = "JUDGEKIT_LOCAL_WORKER"
#: the worker's module, run with ``-m`` (tests may point it elsewhere)
WORKER_MODULE = DEFAULT_MODULE

_T2I_FIELDS = ("steps", "guidance", "width", "height", "negative_prompt")


def worker_command(settings) -> list[str]:
    """The command that starts a worker, before its arguments (``--store ...``)."""
    override = os.environ.get(WORKER_ENV)
    if override:
        return shlex.split(override)
    return [settings.python or sys.executable, "-m", WORKER_MODULE]


# -- shared workers ----------------------------------------------------------------------------
@dataclass(eq=False)
class _Runtime:
    backend: Backend
    batcher: Batcher
    refs: int = 0
    aliases: list[str] = field(default_factory=list)
    stored: set[str] = field(default_factory=set)  # blobs known to be in the store already


_runtimes: dict[str, _Runtime] = {}


def running_runtimes() -> list[_Runtime]:
    """The shared worker runtimes of this process (for displays and tests)."""
    return list(_runtimes.values())


def _runtime_key(settings, store: str) -> str:
    return json.dumps({
        "command": worker_command(settings), "store": store, "device": settings.device,
        "memory_budget_gb": settings.memory_budget_gb, "backend": settings.backend,
        "ray_address": settings.ray_address, "workers": settings.workers,
        "gpus_per_worker": settings.gpus_per_worker, "cpus_per_worker": settings.cpus_per_worker,
        "place_timeout_s": settings.place_timeout_s, "start_timeout_s": settings.start_timeout_s,
        "no_worker_timeout_s": settings.no_worker_timeout_s,
    }, sort_keys=True)


async def _preflight(command: list[str]) -> None:
    """Check fast (no torch import) that the worker's Python exists and has the worker module, so
    a wrong ``local.python`` stops the run at start with a message, not at the first batch."""
    python, module = command[0], command[2].split(".")[0]
    code = f"import importlib.util, sys; sys.exit(0 if importlib.util.find_spec({module!r}) else 3)"
    try:
        proc = await asyncio.create_subprocess_exec(python, "-c", code, stdin=asyncio.subprocess.DEVNULL,
                                                    stdout=asyncio.subprocess.DEVNULL,
                                                    stderr=asyncio.subprocess.PIPE)
        _, err = await asyncio.wait_for(proc.communicate(), 120)
    except FileNotFoundError:
        raise NotFound(f"local.python {python!r}: no such executable (set local.python to the Python of the "
                       f"environment where {WORKER_PACKAGE} is installed)") from None
    except (OSError, asyncio.TimeoutError) as e:
        raise NotFound(f"local.python {python!r} cannot run: {e!r}") from None
    if proc.returncode == 3:
        raise NotFound(f"the Python {python} has no module {module}: install the worker into it with "
                       f"`{install_command(python)}` (the {WORKER_PACKAGE} package, from the judgekit "
                       f"repository), or set local.python to a Python that has it")
    if proc.returncode != 0:
        raise NotFound(f"local.python {python!r} failed (exit code {proc.returncode}): "
                       f"{err.decode('utf-8', 'replace').strip()[-2000:]}")


def _make_backend(settings, command: list[str], store: str, alias: str = "") -> Backend:
    if settings.backend == "ray":
        try:
            from ..local.ray_backend import RayBackend
        except ImportError as e:
            raise NotFound(f"local.backend = 'ray' needs the package ray: pip install 'judgekit[ray]' ({e})") from None
        return RayBackend(command, store=store, device=settings.device, memory_budget_gb=settings.memory_budget_gb,
                          address=settings.ray_address, workers=settings.workers,
                          gpus_per_worker=settings.gpus_per_worker, cpus_per_worker=settings.cpus_per_worker,
                          place_timeout_s=settings.place_timeout_s, start_timeout_s=settings.start_timeout_s,
                          no_worker_timeout_s=settings.no_worker_timeout_s,
                          label=f"{alias} actor" if alias else "ray worker")
    return SubprocessBackend(command, store=store, device=settings.device, memory_budget_gb=settings.memory_budget_gb,
                             threads=settings.cpus_per_worker)


async def acquire_runtime(alias: str, settings, store: str) -> tuple[str, _Runtime]:
    """The shared worker and batcher for these settings (made on first use), and the key to
    release them with.  Every acquire needs one :func:`release_runtime`."""
    key = _runtime_key(settings, store)
    rt = _runtimes.get(key)
    if rt is None:
        command = worker_command(settings)
        if not os.environ.get(WORKER_ENV) and settings.backend == "subprocess":
            await _preflight(command)
        backend = _make_backend(settings, command, store, alias)
        if settings.backend == "ray":  # connect to the cluster and place the actors now
            try:
                await backend.start()
            except Exception as e:
                await backend.close()
                raise NotFound(f"the local workers cannot start on Ray: {e}") from None
        # batch size, wait and restarts are per alias (passed with each item), not per worker
        rt = _runtimes[key] = _Runtime(backend, Batcher(backend))
    rt.refs += 1
    rt.aliases.append(alias)
    return key, rt


async def release_runtime(key: str, alias: str = "") -> None:
    """Drop one reference; the last one closes the batcher and stops the worker."""
    rt = _runtimes.get(key)
    if rt is None:
        return
    rt.refs -= 1
    if alias in rt.aliases:
        rt.aliases.remove(alias)
    if rt.refs <= 0:
        del _runtimes[key]
        await rt.batcher.close()
        await rt.backend.close()


# -- the provider ------------------------------------------------------------------------------
class LocalProvider(Provider):
    kind = "local"

    def __init__(self, alias: str, spec) -> None:
        super().__init__(alias, spec)
        if spec.local is None:
            raise ValueError(f"model '{alias}': provider 'local' needs the table `local`")
        self.settings = spec.local
        self.preset: Preset | None = PRESETS[self.settings.preset] if self.settings.preset else None
        self._key: str | None = None
        self._rt: _Runtime | None = None
        self.model_ref = self._model_ref()
        self.defaults = self._t2i_defaults() if self.settings.task == "text_to_image" else {}
        self._identity = self._make_identity()
        #: the field of a reply that names the file the worker wrote (a chat reply names none)
        self._output_field = {"text_to_image": "image", "embed_image": "vector"}.get(self.settings.task)
        self.stores_outputs = self._output_field is not None

    # -- what the worker is told, and what goes into the key -----------------------------------
    def _model_ref(self) -> dict[str, Any]:
        s = self.settings
        dtype = s.dtype if s.dtype != "auto" or self.preset is None else self.preset.dtype
        ref: dict[str, Any] = {"id": self.spec.model, "revision": s.revision, "dtype": dtype,
                               "trust_remote_code": s.trust_remote_code}
        if s.task == "chat":
            if s.chat_api != "transformers":  # (absent = transformers: earlier cache keys stay valid)
                ref["chat_api"] = s.chat_api
                ref["max_tiles"] = s.max_tiles
        elif s.task == "text_to_image":
            ref["pipeline"] = s.pipeline if s.pipeline != "auto" or self.preset is None else self.preset.pipeline
        elif s.task == "embed_image":
            ref["encoder"] = s.encoder
            ref["pooling"] = s.pooling
        return ref

    def _t2i_defaults(self) -> dict[str, Any]:
        out = {}
        for name in _T2I_FIELDS:
            v = getattr(self.settings, name)
            if v is None and self.preset is not None:
                v = getattr(self.preset, name)
            out[name] = v
        return out

    def _make_identity(self) -> str:
        ident: dict[str, Any] = {k: v for k, v in self.model_ref.items() if k not in ("id", "trust_remote_code")}
        for name, v in self.defaults.items():
            if name == "negative_prompt" and v:
                v = "sha256:" + hashlib.sha256(v.encode()).hexdigest()[:16]
            ident[name] = v
        body = ";".join(f"{k}={json.dumps(ident[k], ensure_ascii=False)}" for k in sorted(ident))
        return f"local:{self.settings.task};{body}"

    @property
    def identity(self) -> str:
        """Task, revision, dtype, pipeline/encoder/pooling and the text-to-image defaults: what
        changes the output besides the model id, the params and the inputs."""
        return self._identity

    def output_blobs(self, response: ChatResponse) -> tuple[str, ...]:
        """The image drawn or the vector encoded (a cached one that is gone is made again)."""
        return sha256_at(response.text, self._output_field) if self._output_field else ()

    # -- lifecycle ---------------------------------------------------------------------------
    async def start(self) -> None:
        if self._rt is not None:
            return
        if self.blobs is None:
            raise RuntimeError(f"model '{self.alias}' (local): no blob store to exchange images with the worker "
                               "(the engine sets provider.blobs)")
        store = str(self.blobs.root.resolve())
        await asyncio.to_thread(self.blobs.root.mkdir, parents=True, exist_ok=True)
        self._key, self._rt = await acquire_runtime(self.alias, self.settings, store)

    async def close(self) -> None:
        if self._key is not None:
            key, self._key, self._rt = self._key, None, None
            await release_runtime(key, self.alias)

    def status_lines(self) -> list[str]:
        """The worker's and batcher's state for the live display ([] before start)."""
        return self._rt.batcher.status() if self._rt is not None else []

    def faults(self) -> dict[str, Any]:
        """Its workers' faults for the summary (:meth:`judgekit.local.Batcher.faults`), with the
        aliases sharing them ({} before start)."""
        rt = self._rt
        if rt is None:
            return {}
        return {**rt.batcher.faults(), "shared_by": sorted(set(rt.aliases))}

    # -- calls -------------------------------------------------------------------------------
    async def generate(self, request: ChatRequest) -> ChatResponse:
        if self._rt is None:
            raise RuntimeError(f"model '{self.alias}' (local): start() was not called")
        task = self.settings.task
        t0 = time.perf_counter()
        if task == "chat":
            params, inputs = await self._chat(request)
        elif task == "text_to_image":
            params, inputs = self._text_to_image(request)
        else:
            params, inputs = await self._embed(request)
        try:
            s = self.settings
            out = await self._rt.batcher.submit(task, self.model_ref, params, inputs, batch_size=s.batch_size,
                                                max_wait_ms=s.max_wait_ms, max_restarts=s.max_restarts)
        except LocalItemError as e:
            raise self._error(e) from None
        latency = time.perf_counter() - t0
        await self._check_stored(task, out)
        if task == "chat":
            # the same rule as every chat provider (replies.py): no text is EmptyReply, not an answer
            finish = short_string(out.get("finish_reason"), "finish_reason", strict=False) or "stop"
            return ChatResponse(reply_text(out.get("text"), finish_reason=finish),
                                Usage(token_count(out.get("input_tokens"), "input_tokens"),
                                      token_count(out.get("output_tokens"), "output_tokens")),
                                finish_reason=finish, latency_s=latency)
        if task == "text_to_image":
            record = {"image": out.get("image"), "seed": inputs["seed"],
                      **{k: params.get(k) for k in ("steps", "guidance", "width", "height")},
                      "negative_prompt": inputs["negative_prompt"]}
            return ChatResponse(json.dumps(record, ensure_ascii=False, sort_keys=True), finish_reason="stop",
                                latency_s=latency)
        record = {"vector": out.get("vector"), "encoder": out.get("encoder")}
        return ChatResponse(json.dumps(record, ensure_ascii=False, sort_keys=True), finish_reason="stop",
                            latency_s=latency)

    async def _check_stored(self, task: str, out: dict[str, Any]) -> None:
        """The image or vector the worker wrote must be in this machine's store: else (a node
        that does not share it) the item fails uncached, and a rerun makes it again."""
        ref = out.get("image") if task == "text_to_image" else out.get("vector") if task == "embed_image" else None
        sha = ref.get("sha256") if isinstance(ref, dict) else None
        if not isinstance(sha, str):
            return  # a malformed reply: the benchmark reading it says so
        if not await asyncio.to_thread(self.blobs.has, sha):
            raise TransientError(f"the worker wrote {sha[:12]}... but it is not in the store {self.blobs.root}: the "
                                 "worker's node does not share the store (mount it at the same path on every "
                                 "node); re-run the same command to make it again")

    def _error(self, e: LocalItemError) -> ProviderError:
        model = self.spec.model
        if e.kind == "crash":
            return TransientError(e.message)
        if e.kind == "unavailable":
            return TransientError(f"{e.message}; re-run the same command to retry")
        if e.kind == "start_failed":
            return NotFound(e.message)
        if e.kind == "load_failed":
            return BadRequest(f"model {model} failed to load: {e.message}")
        if e.kind == "oom":
            return BadRequest(f"out of memory running {model}: {e.message}")
        if e.kind == "bad_input":
            return BadRequest(f"bad input: {e.message}")
        return BadRequest(f"the worker failed on this item: {e.message}")

    async def _put(self, image: ImagePart) -> str:
        stored = self._rt.stored
        if image.sha256 in stored:
            return image.sha256
        sha = await asyncio.to_thread(self.blobs.put, image.data, image.mime)
        stored.add(sha)
        return sha

    async def _chat(self, request: ChatRequest) -> tuple[dict[str, Any], dict[str, Any]]:
        messages = []
        for m in request.messages:
            content: list[dict[str, Any]] = []
            for part in m.parts:
                if isinstance(part, TextPart):
                    content.append({"type": "text", "text": part.text})
                elif isinstance(part, ImagePart):
                    content.append({"type": "image", "sha256": await self._put(part)})
            messages.append({"role": m.role, "content": content})
        p = request.params
        params: dict[str, Any] = {"max_new_tokens": p.max_tokens or DEFAULT_MAX_NEW_TOKENS}
        if p.temperature:
            params["do_sample"] = True
            params["temperature"] = float(p.temperature)
            if p.top_p is not None:
                params["top_p"] = float(p.top_p)
        else:
            params["do_sample"] = False
        if p.seed is not None:
            params["seed"] = p.seed
        params.update(p.extra)
        return params, {"messages": messages}

    def _text_to_image(self, request: ChatRequest) -> tuple[dict[str, Any], dict[str, Any]]:
        prompt = request.messages[-1].text().strip() if request.messages else ""
        if not prompt:
            raise BadRequest("text_to_image needs a prompt: the request's last message has no text")
        seed = request.params.seed
        if seed is None:
            raise BadRequest("text_to_image needs a seed (params.seed): every generated image is seeded and "
                             "recorded")
        values = dict(self.defaults)
        extra = dict(request.params.extra)
        for name in _T2I_FIELDS:
            if name in extra:
                values[name] = extra.pop(name)
        params = {k: values[k] for k in ("steps", "guidance", "width", "height") if values[k] is not None}
        params.update(extra)
        return params, {"prompt": prompt, "negative_prompt": values["negative_prompt"], "seed": int(seed)}

    async def _embed(self, request: ChatRequest) -> tuple[dict[str, Any], dict[str, Any]]:
        images = [p for m in request.messages for p in m.parts if isinstance(p, ImagePart)]
        if len(images) != 1:
            raise BadRequest(f"embed_image needs exactly one image in the request, got {len(images)}")
        return dict(request.params.extra), {"image": {"sha256": await self._put(images[0])}}
