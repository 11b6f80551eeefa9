"""viewlint's locations and edits as LSP types, in the position encoding agreed with the client."""

from __future__ import annotations

from lsprotocol import types

from viewlint.diagnostics import Edit, Location
from viewlint.lsp.positions import PositionEncoder


def lsp_range(start: Location, end: Location, encoder: PositionEncoder) -> types.Range:
    first, last = encoder.to_lsp(start), encoder.to_lsp(end)
    return types.Range(types.Position(*first), types.Position(*last))


def text_edit(edit: Edit, encoder: PositionEncoder) -> types.TextEdit:
    return types.TextEdit(range=lsp_range(edit.start, edit.end, encoder), new_text=edit.content)
