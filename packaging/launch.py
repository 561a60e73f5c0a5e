"""Entry script for the frozen app: the same `memviz` entry point as the installed command."""

import sys

from memviz.cli import main

if __name__ == "__main__":
    sys.exit(main())
