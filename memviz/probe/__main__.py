"""`python -m memviz.probe ...`: the same as `memviz probe ...`."""

import sys

from memviz.probe.runner import main

sys.exit(main())
