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


def test_config_rejects_unknown_fields():
    with pytest.raises(ValidationError):
        parse_args(["--config-json", '{"nope": 1}'])
    with pytest.raises(ValidationError):
        SimConfig(error_rate=2)
