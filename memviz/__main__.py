"""`python -m memviz` runs the same entry point as the `memviz` command."""

import sys

from memviz.cli import main

sys.exit(main())
