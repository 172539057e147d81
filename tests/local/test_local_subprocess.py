"""``python -m judgekit_local``: the line protocol over real pipes."""

import json
import os
import subprocess
import sys

import pytest

pytest.importorskip("torch")
pytest.importorskip("transformers")
pytest.importorskip("judgekit_local")

from judgekit_local.store import Store  # noqa: E402

# A plug-in encoder that prints to stdout from Python and from the C level: both must land in
# stderr, never among the protocol lines.
NOISY_PLUGIN = '''
import os
import sys

class Encoder:
    name = "noisy"

    def encode(self, images):
        print("python-level noise")
        sys.stdout.flush()
        os.write(1, b"fd-level noise\\n")
        return [[float(im.size[0]), float(im.size[1])] for im in images]

def make(model_ref, device, dtype):
    print("noise while loading")
    return Encoder()
'''


def start(tmp_path, *args):
    (tmp_path / "noisy_encoder_plugin.py").write_text(NOISY_PLUGIN)
    env = dict(os.environ, HF_HUB_OFFLINE="1", PYTHONPATH=os.pathsep.join(
        [str(tmp_path), *filter(None, [os.environ.get("PYTHONPATH")])]))
    return subprocess.Popen(
        [sys.executable, "-m", "judgekit_local", "--store", str(tmp_path / "blobs"), "--device", "cpu", *args],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env,
    )


def send(proc, message) -> None:
    line = message if isinstance(message, str) else json.dumps(message)
    proc.stdin.write(line.encode() + b"\n")
    proc.stdin.flush()


def test_hello_batch_shutdown(tmp_path, tiny_clip, png_bytes):
    store = Store(tmp_path / "blobs")
    image = {"sha256": store.put(png_bytes(), ".png")}
    proc = start(tmp_path)
    try:
        hello = json.loads(proc.stdout.readline())  # written before the worker reads anything
        assert hello["type"] == "hello" and hello["protocol"] == 1 and hello["pid"] == proc.pid
        send(proc, "{not json")
        send(proc, {"op": "frobnicate"})
        send(proc, {"op": "batch", "batch_id": "b1", "task": "embed_image", "model": {"id": tiny_clip},
                    "params": {}, "items": [{"item_id": "i1", "inputs": {"image": image}},
                                            {"item_id": "i2", "inputs": {"image": {"sha256": "1" * 64}}}]})
        send(proc, {"op": "batch", "batch_id": "b2", "task": "embed_image",
                    "model": {"id": "toy", "encoder": "noisy_encoder_plugin:make"},
                    "params": {}, "items": [{"item_id": "n1", "inputs": {"image": image}}]})
        send(proc, {"op": "shutdown"})
        send(proc, {"op": "batch", "batch_id": "never", "task": "embed_image", "model": {"id": tiny_clip},
                    "params": {}, "items": [{"item_id": "x", "inputs": {"image": image}}]})
        stdout, stderr = proc.communicate(timeout=120)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 0, stderr.decode(errors="replace")[-2000:]
    lines = [json.loads(line) for line in stdout.decode().splitlines()]  # every line is JSON
    logs = [m for m in lines if m["type"] == "log"]
    assert len(logs) == 2 and "malformed" in logs[0]["message"] and "frobnicate" in logs[1]["message"]
    results = {m["item_id"]: m for m in lines if m["type"] == "result"}
    assert set(results) == {"i1", "i2", "n1"}  # nothing after shutdown
    assert results["i1"]["ok"] and results["i1"]["output"]["vector"]["dim"] == 16
    assert results["i2"]["error_kind"] == "bad_input"
    assert results["n1"]["output"]["encoder"] == "noisy"
    assert [m["batch_id"] for m in lines if m["type"] == "batch_done"] == ["b1", "b2"]
    last_of_b1 = max(i for i, m in enumerate(lines) if m.get("batch_id") == "b1")
    assert lines[last_of_b1]["type"] == "batch_done"
    err = stderr.decode()
    assert "python-level noise" in err and "fd-level noise" in err and "noise while loading" in err


def test_eof_ends_the_worker(tmp_path):
    proc = start(tmp_path)
    stdout, _ = proc.communicate(timeout=120)
    assert proc.returncode == 0
    assert [json.loads(line)["type"] for line in stdout.decode().splitlines()] == ["hello"]
