"""Tests of ``python -m judgekit.sim`` option parsing."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from judgekit.sim.__main__ import parse_args
from judgekit.sim.config import SimConfig


def test_flags_and_config_json_override():
    cfg, host, port = parse_args([
        "--port", "0", "--seed", "3", "--rpm", "100", "--latency-ms", "5", "--api-key", "a",
        "--api-key", "b", "--config-json", '{"seed": 9, "model_quality": {"m": 0.9}}',
    ])
    assert (host, port) == ("127.0.0.1", 0)
    assert cfg.seed == 9 and cfg.rpm == 100 and cfg.latency_ms == 5
    assert cfg.api_keys == ["a", "b"] and cfg.model_quality == {"m": 0.9}


def test_defaults():
    cfg, _, _ = parse_args([])
    assert cfg == SimConfig()


def test_config_rejects_unknown_fields(capsys):
    with pytest.raises(SystemExit) as e:  # one line naming the setting, exit 2, no traceback
        parse_args(["--config-json", '{"nope": 1}'])
    assert e.value.code == 2 and "nope" in capsys.readouterr().err
    with pytest.raises(ValidationError):
        SimConfig(error_rate=2)


@pytest.mark.parametrize("args, name", [(["--latency-ms", "nan"], "--latency-ms"), (["--error-rate", "inf"], "--error-rate"),
                                        (["--config-json", '{"hang_s": Infinity}'], "hang_s")])
def test_non_finite_numbers_are_refused(capsys, args, name):
    with pytest.raises(SystemExit) as e:
        parse_args(args)
    err = capsys.readouterr().err
    assert e.value.code == 2 and name in err and "Traceback" not in err
