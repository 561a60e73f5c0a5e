import atexit
import os
import shutil
import tempfile

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
# nothing outside temporary folders and no network: Hugging Face's cache and hub are pointed away before any
# test imports huggingface_hub or transformers (they read these once)
os.environ["HF_HOME"] = tempfile.mkdtemp(prefix="memviz-tests-hf-")
atexit.register(shutil.rmtree, os.environ["HF_HOME"], True)
os.environ["HF_HUB_OFFLINE"] = "1"

import pytest  # noqa: E402


def needs_llamacpp():
    """llama-cpp-python for the tests that run a real llama.cpp: CI sets MEMVIZ_REQUIRE_LLAMACPP=1 and installs
    it (scripts/llamacpp-wheel.sh), so there a missing binding fails; elsewhere those tests need the extra."""
    if os.environ.get("MEMVIZ_REQUIRE_LLAMACPP") == "1":
        import llama_cpp

        return llama_cpp
    return pytest.importorskip("llama_cpp", reason="the llamacpp extra (scripts/llamacpp-wheel.sh) is not installed")


@pytest.fixture(autouse=True)
def _fresh_settings(tmp_path, monkeypatch):
    """Never read or write the developer's preferences or stored probe runs."""
    monkeypatch.setenv("MEMVIZ_DATA_DIR", str(tmp_path / "memviz-data"))
    try:
        from memviz.gui import settings
    except ImportError:  # GUI dependencies absent: core tests still run
        yield
        return
    settings.use_path(str(tmp_path / "settings.ini"))
    yield
    settings.use_path(None)
