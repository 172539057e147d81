"""Which models may take a role that needs a chat model (judgekit.judging.roles)."""

from __future__ import annotations

import pytest

from judgekit.config import load_spec
from judgekit.errors import SpecError
from judgekit.judging.roles import check_chat_models, require_judge

MODELS = ('[models.j]\nprovider = "sim"\nmodel = "sim-judge"\n'
          '[models.enc]\nprovider = "local"\nmodel = "clip"\nlocal = { task = "embed_image" }\n')


def spec_with(tmp_path, roles: str):
    path = tmp_path / "spec.toml"
    path.write_text(f'name = "t"\nbenchmark = "pairwise"\ndata = "d.jsonl"\n{MODELS}[roles]\n{roles}\n',
                    encoding="utf-8")
    return load_spec(str(path))


def test_require_judge_names_the_role(tmp_path):
    assert require_judge(spec_with(tmp_path, 'judge = "j"')) == "j"
    with pytest.raises(SpecError, match=r"spec\.toml: roles\.judge: name the model that judges"):
        require_judge(spec_with(tmp_path, 'candidates = ["j"]'))
    with pytest.raises(SpecError, match=r"roles\.judge: 'enc' cannot judge \(provider 'local', "
                                        r"local\.task 'embed_image'\)"):
        require_judge(spec_with(tmp_path, 'judge = "enc"'))


def test_check_chat_models_passes_chat_models(tmp_path):
    spec = spec_with(tmp_path, 'judge = "j"')
    check_chat_models(spec, "roles.candidates", ["j"])
    with pytest.raises(SpecError, match=r"roles\.candidates: 'enc' is not a chat model"):
        check_chat_models(spec, "roles.candidates", ["j", "enc"], verb="is not a chat model")
