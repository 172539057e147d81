"""Spec keys of local models: `provider = "local"` with its `local` table."""

import textwrap

import pytest

from judgekit.config import LocalSettings, ModelSpec, load_spec
from judgekit.errors import SpecError
from judgekit.local.presets import PRESETS

HEAD = """
name = "t"
benchmark = "creation_mmbench"
data = "x.tsv"
[roles]
candidates = ["m"]
"""


def spec(tmp_path, models):
    p = tmp_path / "spec.toml"
    p.write_text(textwrap.dedent(HEAD) + textwrap.dedent(models))
    return p


def test_a_local_chat_model_with_every_default(tmp_path):
    s = load_spec(str(spec(tmp_path, """
        [models.m]
        provider = "local"
        model = "Qwen/Qwen2-VL-2B-Instruct"
        local = { task = "chat" }
    """)))
    m = s.models["m"]
    assert m.model == "Qwen/Qwen2-VL-2B-Instruct"  # a hub id stays a hub id
    assert m.local == LocalSettings(task="chat")
    assert (m.local.device, m.local.dtype, m.local.batch_size, m.local.max_wait_ms, m.local.max_restarts,
            m.local.backend, m.local.trust_remote_code, m.local.python) == (
        "auto", "auto", 8, 20, 3, "subprocess", False, None)


def test_relative_weights_and_python_are_relative_to_the_spec(tmp_path):
    (tmp_path / "weights" / "tiny").mkdir(parents=True)
    s = load_spec(str(spec(tmp_path, """
        [models.m]
        provider = "local"
        model = "weights/tiny"
        [models.m.local]
        task = "embed_image"
        python = "envs/gpu/bin/python"
        pooling = "cls"
        [models.n]
        provider = "local"
        model = "./not-there-yet"
        local = { task = "embed_image", python = "python3" }
    """)))
    assert s.models["m"].model == str(tmp_path / "weights" / "tiny")
    assert s.models["m"].local.python == str(tmp_path / "envs/gpu/bin/python")
    assert s.models["m"].local.pooling == "cls"
    assert s.models["n"].model == str(tmp_path / "not-there-yet")
    assert s.models["n"].local.python == "python3"  # a bare name is looked up on PATH


def test_a_preset_names_the_checkpoint(tmp_path):
    s = load_spec(str(spec(tmp_path, """
        [models.m]
        provider = "local"
        local = { task = "text_to_image", preset = "sd3.5-large", steps = 20 }
    """)))
    assert s.models["m"].model == PRESETS["sd3.5-large"].checkpoint
    assert s.models["m"].local.steps == 20


@pytest.mark.parametrize("models, expected", [
    ('[models.m]\nprovider = "local"\nmodel = "x"\n', "provider 'local' needs the table `local`"),
    ('[models.m]\nprovider = "local"\nmodel = "x"\nlocal = { task = "chat", bogus = 1 }\n',
     "models.m.local.bogus: unknown key"),
    ('[models.m]\nprovider = "local"\nmodel = "x"\nlocal = { task = "draw" }\n', "models.m.local.task"),
    ('[models.m]\nprovider = "local"\nmodel = "x"\nlocal = { task = "chat", dtype = "int4" }\n',
     "models.m.local.dtype"),
    ('[models.m]\nprovider = "local"\nlocal = { task = "text_to_image", preset = "dalle" }\n',
     "unknown preset 'dalle'"),
    ('[models.m]\nprovider = "local"\nmodel = "x"\nlocal = { task = "chat", preset = "kolors" }\n',
     "preset is for task 'text_to_image'"),
    ('[models.m]\nprovider = "openai"\nmodel = "x"\nlocal = { task = "chat" }\n',
     "`local` settings are for provider 'local'"),
    ('[models.m]\nprovider = "local"\nmodel = "x"\nlocal = { task = "chat", batch_size = 0 }\n',
     "models.m.local.batch_size"),
])
def test_bad_local_settings_are_named(tmp_path, models, expected):
    with pytest.raises(SpecError) as e:
        load_spec(str(spec(tmp_path, models)))
    assert expected in str(e.value)


def test_every_setting_is_documented():
    for name, field in LocalSettings.model_fields.items():
        assert field.description, name
    assert ModelSpec.model_fields["local"].description


def test_the_presets_match_the_workers_copy_when_it_is_there():
    import importlib.util
    from pathlib import Path

    path = Path(__file__).resolve().parents[2] / "local" / "judgekit_local" / "presets.py"
    if not path.exists():
        pytest.skip("local/judgekit_local/presets.py not written yet")
    mod_spec = importlib.util.spec_from_file_location("_worker_presets", path)
    mod = importlib.util.module_from_spec(mod_spec)
    mod_spec.loader.exec_module(mod)  # plain data: no torch
    theirs = mod.TEXT_TO_IMAGE_PRESETS
    assert set(theirs) == set(PRESETS)
    for name, ours in PRESETS.items():
        t = theirs[name]
        assert (t["model"]["id"], t["model"]["dtype"], t["model"]["pipeline"]) == (
            ours.checkpoint, ours.dtype, ours.pipeline), name
        assert t["params"] == {"guidance": ours.guidance, "steps": ours.steps, "width": ours.width,
                               "height": ours.height}, name
        assert t["negative_prompt"] == ours.negative_prompt, name
