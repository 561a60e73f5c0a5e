"""memviz: how much memory an LLM needs at inference time, and where it goes."""

from importlib.metadata import PackageNotFoundError, version

try:
    __version__ = version("memviz")
except PackageNotFoundError:  # running from a checkout that was never installed
    __version__ = "0.0.0+checkout"
