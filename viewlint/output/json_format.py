"""``json`` and ``json-lines``: Ruff's JSON schema via ``Diagnostic.to_json()``."""

from __future__ import annotations

import json
from typing import Sequence

from viewlint.diagnostics import Diagnostic
from viewlint.output._common import RenderContext, valid_json


def render(diagnostics: Sequence[Diagnostic], ctx: RenderContext) -> str:
    """A JSON array, indented by 2; ``[]`` when there are no findings. ``cell`` is the notebook cell (else null)."""
    return json.dumps([valid_json(d.to_json()) for d in diagnostics], indent=2) + "\n"


def render_lines(diagnostics: Sequence[Diagnostic], ctx: RenderContext) -> str:
    """One compact JSON object per line (JSON Lines); "" when there are no findings."""
    return "".join(json.dumps(valid_json(d.to_json()), separators=(",", ":")) + "\n" for d in diagnostics)
