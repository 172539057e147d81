import textwrap

import pytest

from judgekit.config import apply_override, list_runners, load_spec
from judgekit.errors import SpecError

BASE = """
name = "t"
benchmark = "creation_mmbench"
data = "x.tsv"
[models.a]
provider = "openai"
model = "gpt-4o"
params = { temperature = 0, max_tokens = 100 }
limits = { max_concurrency = 4, requests_per_minute = 600 }
[roles]
candidates = ["a"]
judge = "a"
"""


def write(tmp_path, text):
    p = tmp_path / "spec.toml"
    p.write_text(textwrap.dedent(text))
    return p


def test_valid_spec_and_relative_data_path(tmp_path):
    spec = load_spec(str(write(tmp_path, BASE)))
    assert spec.models["a"].limits.max_concurrency == 4
    assert spec.models["a"].params.max_tokens == 100
    assert spec.data_path() == tmp_path / "x.tsv"


def test_unknown_key_is_named(tmp_path):
    p = write(tmp_path, BASE.replace("max_concurrency = 4", "max_concurency = 4"))
    with pytest.raises(SpecError) as e:
        load_spec(str(p))
    assert "models.a.limits.max_concurency" in str(e.value)
    assert "unknown key" in str(e.value)
    assert str(p) in str(e.value)


def test_wrong_type_is_named(tmp_path):
    p = write(tmp_path, BASE.replace("max_tokens = 100", 'max_tokens = "lots"'))
    with pytest.raises(SpecError, match=r"models\.a\.params\.max_tokens"):
        load_spec(str(p))


def test_role_must_name_an_alias(tmp_path):
    p = write(tmp_path, BASE.replace('judge = "a"', 'judge = "nobody"'))
    with pytest.raises(SpecError, match="roles.judge: 'nobody' is not a model alias"):
        load_spec(str(p))


def test_set_overrides_parse_toml_values(tmp_path):
    spec = load_spec(str(write(tmp_path, BASE)), ["models.a.limits.max_concurrency=9", "options.dual=false",
                                                  "name=renamed"])
    assert spec.models["a"].limits.max_concurrency == 9
    assert spec.options["dual"] is False
    assert spec.name == "renamed"


def test_bad_override():
    with pytest.raises(SpecError, match="expected key=value"):
        apply_override({}, "nokey")
    with pytest.raises(SpecError, match="not a table"):
        apply_override({"name": "x"}, "name.sub=1")


def test_shipped_runners_validate():
    names = list_runners()
    assert "quickstart" in names
    for name in names:
        load_spec(name)


def test_each_runner_is_named_as_its_file():
    """A runner's spec name sets its results folder (judgekit-out/<name>) and the cache's record
    of its runs: `judgekit run pairwise_quickstart` writes to judgekit-out/pairwise_quickstart."""
    for name in list_runners():
        assert load_spec(name).name == name


def test_missing_runner_lists_known():
    with pytest.raises(SpecError, match="quickstart"):
        load_spec("no-such-runner")


def test_data_override_is_relative_to_the_current_directory(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    spec = load_spec("creation_mmbench", ["data=bench/Creation_MMBench.tsv"])
    assert spec.data_path() == tmp_path / "bench" / "Creation_MMBench.tsv"
    assert load_spec("quickstart", ["data=samples:creation_mmbench/sample.tsv"]).data_path().exists()
    # a hub dataset is a name, not a path: kept as typed
    assert load_spec("quickstart", ["data=hf:opencompass/Creation-MMBench"]).data == "hf:opencompass/Creation-MMBench"


def test_a_benchmark_without_candidates_is_a_spec_error(tmp_path):
    import pytest

    from judgekit.benchmarks.base import load_benchmark
    from judgekit.config import load_spec
    from judgekit.errors import SpecError

    spec = load_spec("quickstart", ["roles.candidates=[]"])
    bench = load_benchmark(spec.benchmark)
    with pytest.raises(SpecError, match="roles.candidates: list at least one"):
        bench.prepare(spec, bench.Options.model_validate(spec.options), None)
