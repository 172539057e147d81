"""`judgekit sim serve` and `judgekit guessbench hints` given bad values: one line, exit 2."""

from __future__ import annotations

import socket

from oneline import assert_user_error, invoke


def test_sim_serve_bad_settings_and_a_taken_port():
    assert_user_error(invoke("sim", "serve", "--error-rate", "5"), "--error-rate", "(got 5.0)")
    assert_user_error(invoke("sim", "serve", "--rpm", "-3"), "--rpm")
    assert_user_error(invoke("sim", "serve", "--port", "99999"), "--port")
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        s.listen()
        port = s.getsockname()[1]
        assert_user_error(invoke("sim", "serve", "--port", str(port)), f"127.0.0.1:{port}", "cannot serve")


def test_hints_out_where_no_folder_can_be(tmp_path):
    f = tmp_path / "file"
    f.write_text("x")
    assert_user_error(invoke("guessbench", "hints", "paper plane", "--out", f / "set"), str(f / "set"))
