"""Run specs: a TOML file, validated by pydantic, naming the benchmark, data, models and roles.

A spec looks like::

    name = "quickstart"
    benchmark = "creation_mmbench"
    data = "samples:creation_mmbench/sample.tsv"   # a path, relative to the spec file, or samples:

    [options]                      # the benchmark's own options (validated by the benchmark)
    judge_images_detail = "low"

    [models.judge]                 # an alias
    provider = "openai"            # openai | gemini | sim
    model = "gpt-4o-2024-08-06"
    api_key_env = "OPENAI_API_KEY"
    params = { temperature = 0, max_tokens = 4096 }
    limits = { max_concurrency = 32, requests_per_minute = 5000, tokens_per_minute = 800000 }

    [roles]
    candidates = ["my-vlm"]
    judge = "judge"

Unknown keys, wrong types and values out of range are a :class:`~judgekit.errors.SpecError`
naming the file and the key, on one line.  Types are strict: a bool is ``true``/``false`` (not
``0`` or ``"yes"``), an integer is an integer (not ``2.0``), a number is a number (an integer is
fine where a float is expected; not ``"0.5"``, not inf or nan).  ``--set`` overrides go through
the same checks.  Benchmarks' ``[options]`` models use :data:`STRICT_CONFIG` too.
"""

from __future__ import annotations

import math
import os
import tomllib
from pathlib import Path
from typing import Any, Literal

from pydantic import Field, ValidationError, field_validator, model_validator

from .cost.prices import PriceOverride
from .errors import SpecError
from .resources import runners_dir, samples_dir
from .types import GenParams

__all__ = [
    "STRICT_CONFIG",
    "Limits",
    "LocalSettings",
    "ImageGenSettings",
    "ModelParams",
    "ModelSpec",
    "Roles",
    "RunSpec",
    "load_spec",
    "resolve_spec_path",
    "list_runners",
    "apply_override",
    "validation_problems",
    "check_simulator_settings",
]

from .model_settings import STRICT_CONFIG, ImageGenSettings, LocalSettings, _Strict


#: the default request timeout's bounds (Limits.timeout_for), and its value with no max_tokens
MIN_DEFAULT_TIMEOUT_S, MAX_DEFAULT_TIMEOUT_S, DEFAULT_TIMEOUT_S = 120.0, 600.0, 300.0


class Limits(_Strict):
    """Per-bucket limits.  A bucket is one (provider, model, base URL)."""

    max_concurrency: int = Field(16, ge=1, description="calls in flight at once (the ceiling the adaptive limit grows back to)")
    requests_per_minute: float | None = Field(None, gt=0, description="RPM; None = unlimited")
    tokens_per_minute: float | None = Field(None, gt=0, description="TPM counted before sending; None = unlimited")
    timeout_s: float | None = Field(None, gt=0, description="per-request timeout in seconds; default: "
                                    "timeout_for(max_tokens), which cuts a dead connection in about two "
                                    "minutes and gives long generations time")

    def timeout_for(self, max_tokens: int | None) -> float:
        """The timeout of one request: ``timeout_s`` when set; else 60 s plus a second per 50 output
        tokens the request allows (a slow decoder's pace), kept within 120-600 s, and 300 s when the
        request sets no max_tokens.  Non-streaming replies send nothing until they are complete, so
        one bound has to cover both a hung connection and the longest legitimate answer."""
        if self.timeout_s is not None:
            return self.timeout_s
        if max_tokens is None:
            return DEFAULT_TIMEOUT_S
        return min(MAX_DEFAULT_TIMEOUT_S, max(MIN_DEFAULT_TIMEOUT_S, 60.0 + max_tokens / 50.0))
    max_attempts: int = Field(6, ge=1, description="attempts per call for retryable errors")
    max_consecutive_failures: int = Field(20, ge=1, description="transient failures in a row before the bucket pauses")


class ModelParams(_Strict):
    """Generation parameters (all part of the cache key)."""

    temperature: float | None = Field(None, ge=0, le=2, description="sampling temperature, 0..2")
    max_tokens: int | None = Field(None, ge=1, description="the most output tokens of a call")
    top_p: float | None = Field(None, gt=0, le=1, description="nucleus sampling mass, in (0, 1]")
    seed: int | None = Field(None, ge=0, lt=2**63, description="sampling seed (where the API takes one)")
    image_detail: Literal["low", "high", "auto"] | None = None
    reasoning_effort: Literal["minimal", "low", "medium", "high"] | None = Field(
        None, description="OpenAI o-series and gpt-5: how much the model reasons before it answers (sent as "
                          "reasoning_effort; other models refuse it)")
    thinking_budget: int | None = Field(
        None, ge=0, lt=2**31, description="Gemini 2.5+ thinking models: the most thinking tokens a call spends "
                                          "(ThinkingConfig.thinking_budget; 0 turns thinking off where the model "
                                          "allows); thinking is billed as output")

    def gen_params(self) -> GenParams:
        """These parameters as the engine's request record."""
        return GenParams(temperature=self.temperature, max_tokens=self.max_tokens, top_p=self.top_p,
                         seed=self.seed, image_detail=self.image_detail, reasoning_effort=self.reasoning_effort,
                         thinking_budget=self.thinking_budget)


class ModelSpec(_Strict):
    """One model alias."""

    provider: Literal["openai", "azure", "gemini", "anthropic", "sim", "local", "brave", "sim_image_search",
                      "image_folder", "openai_image", "sim_image"] = Field(
        description="chat models: openai, azure, gemini, anthropic, sim; local: a model run on this machine's GPU/CPU "
                    "by the judgekit-local worker (see `local`); image retrievers: brave (Brave Image Search "
                    "API), sim_image_search (the simulator's copy of it), image_folder (a local folder of "
                    "labelled images); image generators: openai_image (the OpenAI Images API, or a compatible "
                    "server at base_url), sim_image (the simulator's copy of it)")
    model: str = Field(description="the provider's model name (Azure: the deployment name; local: a hub id or "
                                   "a folder, relative to the spec file)")
    serves: str | None = Field(None, description="the underlying model when `model` is a name of your own (an Azure "
                                                 "deployment, a gateway alias): used for prices, token counts, image "
                                                 "tokens and the parameters the model accepts")
    base_url: str | None = Field(None, description="OpenAI-compatible server URL (vLLM, SGLang, Ollama, gateways)")
    api_key_env: str | None = Field(None, description="env var that holds the key; never the key itself")
    api_version: str | None = Field(None, description="Azure OpenAI API version")
    params: ModelParams = ModelParams()
    drop_unsupported_params: bool = Field(
        False, description="leave out the parameters the model's family rejects (temperature other than 1 "
                           "and top_p for o-series / gpt-5) with a note at start, instead of refusing to run")
    prompt_cache: bool = Field(True, description="anthropic: mark the fixed prefix (the system prompt, the first "
                                                 "user turn's images before its text) with cache_control so "
                                                 "repeats read it at the cached rate; false: no marks")
    limits: Limits = Limits()
    batch: bool = Field(False, description="send this model's calls through its provider's batch API (half price, "
                                           "answers within 24 h); `--batch` sets it for every model whose provider has one")
    batch_linger_s: float = Field(2.0, gt=0, description="batch mode: submit a wave once no new call joined it for "
                                                          "this long (or it is as big as one batch may be)")
    batch_poll_s: float = Field(30.0, gt=0, description="batch mode: seconds between two polls of a batch")
    batch_fallback: Literal["batch", "live"] = Field(
        "batch", description="batch mode: a request a finished batch left unanswered (expired, cancelled) is asked "
                             "again in the next batch, or live")
    batch_attempts: int = Field(2, ge=1, description="batch mode: batches a request may be sent in before it "
                                                     "counts as failed")
    batch_queue_tokens: int | None = Field(
        None, ge=1, description="batch mode: the organisation's enqueued-token limit for this model (OpenAI's batch "
                                "queue limit: input tokens of every batch not ended yet); batches hold at most this "
                                "many estimated tokens and wait while earlier ones would pass it")
    price: PriceOverride | None = Field(None, description="USD per million tokens, overriding genai-prices")
    sim: dict[str, Any] = Field(default_factory=dict, description="simulator settings (provider = 'sim' or "
                                                                   "'sim_image_search')")
    path: str | None = Field(None, description="a local folder (image_folder: the labelled images); relative "
                                               "paths are relative to the spec file, samples:REL is a shipped sample")
    local: LocalSettings | None = Field(None, description="provider 'local': the task and how the worker runs it")
    image: ImageGenSettings | None = Field(None, description="providers 'openai_image' and 'sim_image': size, "
                                                             "quality and extra request fields")

    @property
    def base_model(self) -> str:
        """The model that answers: ``serves`` when set, else ``model``."""
        return self.serves or self.model

    @model_validator(mode="before")
    @classmethod
    def _model_from_preset(cls, data: Any) -> Any:
        # a local text-to-image model named only by its preset gets the preset's checkpoint
        if isinstance(data, dict) and data.get("provider") == "local" and "model" not in data:
            local = data.get("local")
            name = local.get("preset") if isinstance(local, dict) else getattr(local, "preset", None)
            if isinstance(name, str):
                from .local.presets import PRESETS

                if name in PRESETS:
                    data = dict(data, model=PRESETS[name].checkpoint)
        return data

    @model_validator(mode="after")
    def _check(self) -> "ModelSpec":
        if self.provider == "azure" and not self.base_url:
            raise ValueError("provider 'azure' needs base_url (the resource endpoint)")
        if self.provider == "local" and self.local is None:
            raise ValueError("provider 'local' needs the table `local` (at least local.task = \"chat\", "
                             "\"text_to_image\" or \"embed_image\")")
        if self.local is not None and self.provider != "local":
            raise ValueError(f"`local` settings are for provider 'local', not '{self.provider}'")
        if self.image is not None and self.provider not in ("openai_image", "sim_image"):
            raise ValueError(f"`image` settings are for the image generators (provider 'openai_image' or "
                             f"'sim_image'), not '{self.provider}'")
        return self


class Roles(_Strict):
    candidates: list[str] = Field(default_factory=list, description="the models under test (every benchmark "
                                                                    "needs at least one, except an MMIE run that "
                                                                    "only scores imported answers)")
    judge: str | None = Field(None, description="the judge (Creation-MMBench), scorer (MMIE) or answer extractor "
                                                "(GuessBench); with `judges`, the panel's first")
    judges: list[str] = Field(default_factory=list, description="a judge panel: every judge judges every item; "
                                                                "results per judge, an ensemble and their agreement")
    describer: str | None = Field(None, description="Creation-MMBench-TO: the model that describes images")
    retriever: str | None = Field(None, description="GuessBench image retrieval: an image retriever alias")
    generators: list[str] = Field(default_factory=list, description="text-to-image models (MMGenBench's "
                                                                   "stage 2, MMIE's integrated answers): "
                                                                   "local text_to_image, openai_image or "
                                                                   "sim_image aliases")
    encoder: str | None = Field(None, description="MMGenBench: the image encoder (a local embed_image alias)")
    baseline: str | None = Field(None, description="the generic pairwise benchmark: the model whose answers every "
                                                   "candidate's are judged against (or options.baseline_column)")

    @model_validator(mode="before")
    @classmethod
    def _panel_first(cls, data: Any) -> Any:
        # with a panel, roles.judge is its first judge (a spec's judge may be any of the panel, so
        # that --set roles.judges=[...] works on a spec that names one judge)
        if isinstance(data, dict):
            judges = data.get("judges")
            if isinstance(judges, list) and judges and isinstance(judges[0], str):
                judge = data.get("judge")
                if judge is None or (isinstance(judge, str) and judge in judges):
                    data = {**data, "judge": judges[0]}
        return data

    @model_validator(mode="after")
    def _panel(self) -> "Roles":
        if len(set(self.judges)) != len(self.judges):
            dup = next(j for j in self.judges if self.judges.count(j) > 1)
            raise ValueError(f"roles.judges: '{dup}' is named twice")
        if self.judges and self.judge != self.judges[0]:
            panel = ", ".join(f"'{j}'" for j in self.judges)
            raise ValueError(f"roles.judge ('{self.judge}') is not in roles.judges ({panel}): add it to roles.judges "
                             f"or leave roles.judge out (the panel's first is the judge)")
        return self

    @property
    def panel(self) -> list[str]:
        """The judges: roles.judges, or the one roles.judge; empty when neither is set."""
        return list(self.judges) if self.judges else ([self.judge] if self.judge else [])


class RunSpec(_Strict):
    name: str
    benchmark: str
    data: str
    data_split: str | None = Field(None, description="data = \"hf:org/name\": the split to load (default: the "
                                                     "benchmark's, else \"train\")")
    data_config: str | None = Field(None, description="data = \"hf:org/name\": the dataset's configuration (subset)")
    data_revision: str | None = Field(None, description="data = \"hf:org/name\": a branch, tag or commit of the "
                                                        "dataset repository")
    options: dict[str, Any] = Field(default_factory=dict)
    models: dict[str, ModelSpec]
    roles: Roles
    max_cost_usd: float | None = Field(None, ge=0)
    grace_s: float | None = Field(None, ge=0, le=3600, description="seconds the calls in flight at a stop (Ctrl-C, "
                                  "SIGTERM, the cost cap) have to land and be kept; same as --grace (default 15)")
    source_path: str | None = Field(None, description="set by load_spec")

    @field_validator("name")
    @classmethod
    def _name(cls, v: str) -> str:
        if not v.strip():
            raise ValueError("must not be empty")
        return v

    @model_validator(mode="after")
    def _hub_settings(self) -> "RunSpec":
        if not self.data.startswith("hf:"):
            for key in ("data_split", "data_config", "data_revision"):
                if getattr(self, key) is not None:
                    raise ValueError(f"{key} is for a dataset on the Hugging Face hub (data = \"hf:org/name\"), "
                                     f"not data = {self.data!r}")
        return self

    @model_validator(mode="after")
    def _roles_exist(self) -> "RunSpec":
        named = [("roles.candidates", a) for a in self.roles.candidates]
        if self.roles.judges:
            named.extend(("roles.judges", a) for a in self.roles.judges)
        elif self.roles.judge:
            named.append(("roles.judge", self.roles.judge))
        if self.roles.describer:
            named.append(("roles.describer", self.roles.describer))
        if self.roles.retriever:
            named.append(("roles.retriever", self.roles.retriever))
        named.extend(("roles.generators", a) for a in self.roles.generators)
        if self.roles.encoder:
            named.append(("roles.encoder", self.roles.encoder))
        if self.roles.baseline:
            named.append(("roles.baseline", self.roles.baseline))
        for where, alias in named:
            if alias not in self.models:
                raise ValueError(f"{where}: '{alias}' is not a model alias (have: {', '.join(sorted(self.models))})")
        return self

    @model_validator(mode="after")
    def _resolve_model_paths(self) -> "RunSpec":
        # a model's local folder is relative to the spec file, like `data`
        for alias, m in list(self.models.items()):
            if m.path:
                resolved = str(self.resolve_path(m.path))
                if resolved != m.path:
                    self.models[alias] = m = m.model_copy(update={"path": resolved})
            if m.local is not None:
                update = self._local_paths(m)
                if update:
                    self.models[alias] = m.model_copy(update=update)
        return self

    def _local_paths(self, m: "ModelSpec") -> dict[str, Any]:
        """A local model's weights folder and worker Python, resolved like ``path``.  ``model`` is
        a path when it looks like one (``./``, ``../``, ``~``, absolute, ``samples:``) or names an
        existing folder beside the spec; otherwise it is a hub id (``org/name``) and stays as is."""
        update: dict[str, Any] = {}
        model = m.model
        looks_like_path = (model.startswith(("./", "../", "~", "samples:")) or os.path.isabs(model)
                           or model in (".", ".."))
        if looks_like_path or (self.source_path and (Path(self.source_path).parent / model).exists()):
            resolved = str(self.resolve_path(model))
            if resolved != model:
                update["model"] = resolved
        python = m.local.python
        if python and (os.sep in python or "/" in python or python.startswith("~")):
            resolved = str(self.resolve_path(python))
            if resolved != python:
                update["local"] = m.local.model_copy(update={"python": resolved})
        return update

    def resolve_path(self, value: str) -> Path:
        """A path named in the spec: ``samples:REL`` is a shipped sample; relative paths are
        relative to the spec file."""
        if value.startswith("samples:"):
            return samples_dir() / value.split(":", 1)[1]
        p = Path(os.path.expanduser(value))
        if not p.is_absolute() and self.source_path:
            p = Path(self.source_path).parent / p
        return p

    def data_path(self) -> Path:
        """The data file or folder, resolved (see :meth:`resolve_path`)."""
        return self.resolve_path(self.data)


def resolve_spec_path(spec_or_name: str) -> Path:
    """A path to a TOML file, or the name of a shipped runner (``runners/NAME.toml``)."""
    p = Path(spec_or_name)
    if p.suffix == ".toml" or p.exists():
        if not p.exists():
            raise SpecError(f"{p}: no such spec file")
        return p
    cand = runners_dir() / f"{spec_or_name}.toml"
    if cand.exists():
        return cand
    names = ", ".join(sorted(list_runners())) or "none"
    raise SpecError(f"'{spec_or_name}' is neither a spec file nor a shipped runner (runners: {names})")


def list_runners() -> dict[str, str]:
    """Shipped runner names and their first comment line or name."""
    out: dict[str, str] = {}
    for f in sorted(runners_dir().glob("*.toml")):
        first = f.read_text(encoding="utf-8").splitlines()[:1]
        out[f.stem] = first[0].lstrip("# ").strip() if first and first[0].startswith("#") else ""
    return out


def _parse_value(raw: str) -> Any:
    """A ``--set`` value: TOML syntax if it parses (numbers, booleans, lists, quoted strings),
    else the raw string."""
    try:
        return tomllib.loads(f"v = {raw}")["v"]
    except tomllib.TOMLDecodeError:
        return raw


def apply_override(data: dict[str, Any], assignment: str) -> None:
    """Apply one ``--set key.path=value`` to the raw spec dict."""
    if "=" not in assignment:
        raise SpecError(f"--set {assignment!r}: expected key=value")
    key, raw = assignment.split("=", 1)
    parts = [p for p in key.strip().split(".") if p]
    if not parts:
        raise SpecError(f"--set {assignment!r}: empty key")
    node = data
    for p in parts[:-1]:
        nxt = node.setdefault(p, {})
        if not isinstance(nxt, dict):
            raise SpecError(f"--set {key}: '{p}' is not a table")
        node = nxt
    node[parts[-1]] = _parse_value(raw.strip())


def _shown(value: Any) -> str:
    """A value as the user wrote it, cut short: ``'yes'``, ``7``, ``true``."""
    if isinstance(value, bool):
        text = "true" if value else "false"
    elif isinstance(value, dict):
        text = "a table"
    else:
        text = repr(value)
    return text if len(text) <= 40 else text[:37] + "..."


def validation_problems(err: ValidationError, prefix: str = "") -> list[str]:
    """One ``key.path: what is wrong (got VALUE)`` per problem, ``prefix`` before each key."""
    out = []
    for e in err.errors():
        loc = prefix + ".".join(str(x) for x in e["loc"]) or "(top level)"
        if e["type"] == "extra_forbidden":
            out.append(f"{loc}: unknown key")
            continue
        msg = e["msg"].removeprefix("Value error, ")
        # a missing key has no value to show; a check of a whole table (a dict) names no one value
        shown = e["type"] != "missing" and not isinstance(e.get("input"), dict)
        got = f" (got {_shown(e.get('input'))})" if shown else ""
        out.append(f"{loc}: {msg}{got}")
    return out


def _format_errors(path: Path, err: ValidationError) -> str:
    return f"{path}: invalid run spec: " + "; ".join(validation_problems(err))


def check_simulator_settings(spec: RunSpec) -> None:
    """Every ``models.X.sim`` table checked as strictly as the rest of the spec (SpecError naming
    the file and key).  Called when a run or estimate begins, not by :func:`load_spec`: the
    simulator's package takes about a second to import, and a spec is loaded before Ctrl-C is
    handled."""
    problems = []
    for alias, m in spec.models.items():
        if not m.sim:
            continue
        from .sim.config import SimConfig

        where = f"models.{alias}.sim"
        url = m.sim.get("url")
        if url is not None and not isinstance(url, str):
            problems.append(f"{where}.url: the URL of a running simulator, a string (got {_shown(url)})")
        try:
            SimConfig.model_validate({k: x for k, x in m.sim.items() if k != "url"}, strict=True)
        except ValidationError as e:
            problems.extend(validation_problems(e, prefix=where + "."))
    if problems:
        raise SpecError(f"{spec.source_path}: invalid run spec: " + "; ".join(problems))


def _no_nul(path: Path, node: Any, key: str = "") -> None:
    """A NUL character in any key or string of the spec is an error (no path or name holds one)."""
    if isinstance(node, dict):
        for k, v in node.items():
            where = f"{key}.{k}" if key else str(k)
            if "\0" in str(k):
                raise SpecError(f"{path}: {where!r}: a key with a NUL character")
            _no_nul(path, v, where)
    elif isinstance(node, list):
        for i, v in enumerate(node):
            _no_nul(path, v, f"{key}[{i}]")
    elif isinstance(node, str) and "\0" in node:
        raise SpecError(f"{path}: {key}: a NUL character in {_shown(node)}")


def _finite(path: Path, node: Any, key: str = "") -> None:
    """A NaN or an infinity anywhere in the spec is an error, also where a table is passed on as it
    is (``image.extra``'s request fields, a plugin's options): no request, price or option means it,
    and JSON cannot carry it (an images call built from ``extra = { background = nan }`` failed each
    call after the captioners were paid)."""
    if isinstance(node, dict):
        for k, v in node.items():
            _finite(path, v, f"{key}.{k}" if key else str(k))
    elif isinstance(node, list):
        for i, v in enumerate(node):
            _finite(path, v, f"{key}[{i}]")
    elif isinstance(node, float) and not math.isfinite(node):
        raise SpecError(f"{path}: invalid run spec: {key}: Input should be a finite number (got {node!r})")


def load_spec(spec_or_name: str, overrides: list[str] | tuple[str, ...] = ()) -> RunSpec:
    """Read, override and validate a spec.  Raises SpecError naming the file and key."""
    path = resolve_spec_path(spec_or_name)
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except tomllib.TOMLDecodeError as e:
        raise SpecError(f"{path}: not valid TOML: {e}") from None
    except UnicodeDecodeError as e:
        raise SpecError(f"{path}: not UTF-8 (byte {e.start}); TOML files are UTF-8") from None
    except OSError as e:
        raise SpecError(f"{path}: cannot read: {e.strerror or e}") from None
    for o in overrides:
        apply_override(data, o)
        # a path typed on the command line is relative to where the user is, not to the spec
        if o.split("=", 1)[0].strip() == "data" and isinstance(data.get("data"), str):
            given = data["data"]
            if not given.startswith(("samples:", "hf:")) and not Path(os.path.expanduser(given)).is_absolute():
                data["data"] = str(Path.cwd() / given)
    _no_nul(path, data)
    _finite(path, data)
    data["source_path"] = str(path.resolve())
    try:
        return RunSpec.model_validate(data)
    except ValidationError as e:
        raise SpecError(_format_errors(path, e)) from None
