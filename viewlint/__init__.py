"""viewlint: find the memory and speed bugs that come from PyTorch tensor views and copies."""

__version__ = "0.1.0"
