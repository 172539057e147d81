import subprocess
import sys

import judgekit


def test_all_is_the_public_api():
    assert judgekit.__all__ == [
        "__version__", "load_spec", "RunSpec", "ModelSpec", "run_spec", "estimate_spec", "RunOptions",
        "RunOutcome", "Engine", "CallResult", "RunStopped", "CacheStore", "ChatRequest", "ChatResponse",
        "GenParams", "Message", "TextPart", "ImagePart", "JudgekitError", "SpecError", "DataError",
        "results",
    ]
    for name in judgekit.__all__:
        assert getattr(judgekit, name) is not None


def test_import_is_light():
    code = "import sys, judgekit; print(sorted(m for m in ('openai', 'duckdb', 'google.genai', 'rich', 'torch') if m in sys.modules))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"
