"""The probe: a separate process that runs a real transformers model and measures its memory.

It speaks JSON lines on stdout (`protocol`); the GUI never imports torch.
"""
