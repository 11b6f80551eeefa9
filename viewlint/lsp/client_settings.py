"""Settings an editor sends: in ``initializationOptions`` and ``workspace/didChangeConfiguration``.

Accepted shapes (as Ruff's server accepts them): the settings object itself, or wrapped as
``{"settings": {...}}``, or namespaced as ``{"viewlint": {...}}`` (what VS Code sends for a
``viewlint.*`` section), in any combination. Keys, all optional:

- ``select``, ``extendSelect``, ``ignore``, ``extendIgnore``: rule codes or prefixes, as the
  command-line flags of the same names (they override the ``[tool.viewlint]`` configuration);
- ``configuration``: a pyproject.toml or viewlint.toml used for every document (``--config``),
  relative to the workspace root;
- ``unsafeFixes``: fix-all and ``viewlint.applyAutofix`` apply unsafe fixes too (``--unsafe-fixes``);
- ``lintDelay``: milliseconds to wait after a change before linting (default 50).

A value of the wrong type is ignored (and logged); unknown codes are reported on each document,
as a broken configuration is.
"""

from __future__ import annotations

import logging
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Optional

from viewlint.config import CliOverrides
from viewlint.lsp.documents import LintOptions

logger = logging.getLogger(__name__)

DEFAULT_LINT_DELAY_MS = 50
_CODE_LISTS = {"select": "select", "extendSelect": "extend_select", "ignore": "ignore", "extendIgnore": "extend_ignore"}


@dataclass(frozen=True)
class ClientSettings:
    """The editor's settings, as linting options and server behaviour."""

    options: LintOptions = field(default_factory=LintOptions)
    lint_delay: float = DEFAULT_LINT_DELAY_MS / 1000


def _unwrap(raw: Any) -> dict[str, Any]:
    """The settings object inside the shapes editors send."""
    if not isinstance(raw, dict):
        return {}
    for key in ("settings", "viewlint"):
        inner = raw.get(key)
        if isinstance(inner, dict):
            return _unwrap(inner)
    return raw


def parse_settings(raw: Any, workspace_root: Path, previous: Optional[ClientSettings] = None) -> ClientSettings:
    """Client settings from what the editor sent; keys it did not send keep their previous value
    (or the default)."""
    values = _unwrap(raw)
    base = previous or ClientSettings()
    overrides = {name: getattr(base.options.overrides, name) for name in _CODE_LISTS.values()}
    for key, name in _CODE_LISTS.items():
        if key not in values:
            continue
        codes = values[key]
        if codes is None:
            overrides[name] = None
        elif isinstance(codes, list) and all(isinstance(code, str) for code in codes):
            overrides[name] = tuple(code.strip().upper() for code in codes if code.strip())
        else:
            logger.warning("setting %s: expected a list of rule codes, got %r", key, codes)
    config_path = base.options.config_path
    if "configuration" in values:
        configuration = values["configuration"]
        if configuration is None or configuration == "":
            config_path = None
        elif isinstance(configuration, str):
            config_path = Path(workspace_root, os.path.expanduser(configuration))
        else:
            logger.warning("setting configuration: expected a path, got %r", configuration)
    unsafe_fixes = base.options.unsafe_fixes
    if "unsafeFixes" in values:
        if isinstance(values["unsafeFixes"], bool):
            unsafe_fixes = values["unsafeFixes"]
        else:
            logger.warning("setting unsafeFixes: expected true or false, got %r", values["unsafeFixes"])
    lint_delay = base.lint_delay
    if "lintDelay" in values:
        delay = values["lintDelay"]
        if isinstance(delay, (int, float)) and not isinstance(delay, bool) and 0 <= delay <= 10_000:
            lint_delay = delay / 1000
        else:
            logger.warning("setting lintDelay: expected milliseconds (0-10000), got %r", delay)
    options = LintOptions(CliOverrides(**overrides), config_path, unsafe_fixes)
    return ClientSettings(options, lint_delay)
