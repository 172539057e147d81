"""A whole run against a server where about one reply in five is odd (list content, null, blank,
refusal only, ``content: 42``, string, negative and 2**40 usage, no choices, an HTML page, a key
echoed in a 400): the run finishes, the odd calls are counted failures of their class, nothing
empty or odd is cached, no key is stored; a clean rerun on the same cache pays only what failed
and ends with the results of a clean run from scratch."""

import duckdb

from odd_server import ODD, OddProxy

from judgekit.config import load_spec
from judgekit.runner import RunOptions, run_spec
from judgekit.sim import SimConfig, SimServer

KEY = "sk-odd-proxy-key-0123456789"

SPEC = """
name = "odd"
benchmark = "creation_mmbench"
data = "samples:creation_mmbench/sample.tsv"

[options]
pairwise = true
vfs = true
dual = true
reask_on_parse_failure = false

[models.strong]
provider = "openai"
model = "sim-vlm-strong"
base_url = "{url}/v1"
api_key_env = "JK_ODD_KEY"
params = {{ temperature = 0, max_tokens = 512 }}
limits = {{ max_attempts = 2 }}

[models.weak]
provider = "openai"
model = "sim-vlm-weak"
base_url = "{url}/v1"
api_key_env = "JK_ODD_KEY"
params = {{ temperature = 0, max_tokens = 512 }}
limits = {{ max_attempts = 2 }}

[models.judge]
provider = "openai"
model = "sim-judge"
base_url = "{url}/v1"
api_key_env = "JK_ODD_KEY"
params = {{ temperature = 0, max_tokens = 2048, image_detail = "low" }}
limits = {{ max_attempts = 2 }}

[roles]
candidates = ["strong", "weak"]
judge = "judge"
"""

# the odd replies of the run: those the issue names (the others go through the same code and are
# tested one by one through the SDK in test_odd_replies.py), and the salt whose draw gives each of
# them at least once among the run's ~40 calls (10 odd: 24 %)
KINDS = ("list_content", "null_content", "numeric_content", "string_usage", "negative_usage", "huge_usage",
         "key_echo")
SALT = "8"

# what each odd reply must become (the list of parts is a good reply: its text is the answer)
EXPECTED_KIND = {
    "null_content": "empty_reply", "blank_content": "empty_reply", "refusal_only": "refused",
    "numeric_content": "malformed_reply", "string_usage": "malformed_reply", "negative_usage": "malformed_reply",
    "huge_usage": "malformed_reply", "no_choices": "malformed_reply", "html_page": "malformed_reply",
    "key_echo": "bad_request",
}


def _rows(cache, sql):
    con = duckdb.connect(str(cache), read_only=True)
    try:
        return con.execute(sql).fetchall()
    finally:
        con.close()


async def _run(spec_path, out, cache):
    return await run_spec(load_spec(str(spec_path)), RunOptions(out_dir=out, cache_path=cache, limit=5))


async def test_a_run_through_odd_replies_then_a_clean_rerun(tmp_path, monkeypatch):
    monkeypatch.setenv("JK_ODD_KEY", KEY)
    cache = tmp_path / "c.duckdb"
    async with SimServer(SimConfig(seed=7, model_quality={"sim-vlm-strong": 0.3, "sim-vlm-weak": 0.05})) as sim, \
            OddProxy(sim.base_url, key=KEY, rate=0.2, salt=SALT, kinds=KINDS) as proxy:
        spec = tmp_path / "odd.toml"
        spec.write_text(SPEC.format(url=proxy.url))

        first = await _run(spec, tmp_path / "o1", cache)
        assert first.exit_code == 1, first.message  # failed items remain; the run itself finished
        served1 = {h: list(v) for h, v in proxy.served.items()}
        odd1 = {h: v[0] for h, v in served1.items() if v[0] != "ok"}
        failed1 = {h for h, name in odd1.items() if name != "list_content"}
        good1 = set(served1) - failed1
        # about one in five, and every kind came up
        assert 0.1 <= len(odd1) / len(served1) <= 0.35, (len(odd1), len(served1))
        assert set(odd1.values()) == set(KINDS), ("the draw no longer covers every kind (prompts changed?): "
                                                  "pick another SALT", sorted(odd1.values()))
        # each odd call failed with its class, twice (max_attempts = 2: retried, then counted)
        # except the 400, which is not retried
        attempts = _rows(cache, "select error_kind, message from attempts")
        kinds = [k for k, _ in attempts]
        expected = [EXPECTED_KIND[odd1[h]] for h in failed1 for _ in range(1 if odd1[h] == "key_echo" else 2)]
        assert sorted(kinds) == sorted(expected)
        assert all(len(v) == (1 if odd1.get(h) == "key_echo" else 2) for h, v in served1.items() if h in failed1)
        stats = first.stats
        assert sum(s.failures for s in stats.stages.values()) == len(failed1)
        # nothing empty or odd cached, no key stored anywhere
        assert _rows(cache, "select count(*) from responses where trim(text) = ''") == [(0,)]
        assert _rows(cache, "select count(*) from responses")[0][0] == len(good1)
        assert not [m for _, m in attempts if KEY in m]
        assert not (tmp_path / "c.duckdb.wal-rejected").exists()

        # the clean rerun on the same cache
        proxy.odd = False
        proxy.served.clear()
        again = await _run(spec, tmp_path / "o2", cache)
        assert again.exit_code == 0, again.message
        paid2 = set(proxy.served)
        assert not paid2 & good1  # no good response was paid twice
        assert failed1 <= paid2  # every failed call was made again
        assert all(v == ["ok"] for v in proxy.served.values())

        # and a clean run from scratch gives the same results (list content kept the same text)
        proxy.served.clear()
        fresh = await _run(spec, tmp_path / "o3", tmp_path / "fresh.duckdb")
        assert fresh.exit_code == 0
    assert again.summary["results"] == fresh.summary["results"]
    assert _rows(cache, "select count(*) from responses where trim(text) = ''") == [(0,)]


def test_every_odd_reply_has_an_expected_class():
    assert set(EXPECTED_KIND) | {"list_content"} == set(ODD)
