import os

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

import pytest  # noqa: E402


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
