"""The language server's editor-independent parts: positions, documents and the edits they offer.

Nothing here imports pygls or torch; ``viewlint.server`` turns these into LSP messages.
"""
