"""Entry script for the frozen app's windowed launcher: the window only, no console (Windows)."""

import sys

from memviz.gui.app import run

if __name__ == "__main__":
    sys.exit(run())
