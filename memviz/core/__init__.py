"""The estimation core: architectures, formats, estimates, sweeps and fits.

Pure Python and numpy; it imports neither Qt nor torch, so the CLI, the GUI,
the probe and the tests all share it.
"""
