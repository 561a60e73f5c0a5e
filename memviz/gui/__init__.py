"""The PySide6 + pyqtgraph desktop app. Builds on `memviz.core`; no formula lives here."""
