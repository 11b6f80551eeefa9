"""viewlint as a flake8 plugin: `flake8 --select VL` reports the same findings as `viewlint`.

flake8 finds this class through the `flake8.extension` entry point `VL`. Each file is
linted with the settings of the nearest `[tool.viewlint]` configuration above it, just
as `viewlint check` would. flake8 adds 1 to a plugin's column, so columns are passed
0-based. Nothing here imports torch.

flake8 walks folders itself (with its own `--exclude`) and hands each file to the plugin by
name, whether it found it in a folder or was given it: the plugin cannot tell which. So a
file that `viewlint check` would pass over when walking a folder — viewlint's `exclude`,
`extend-exclude`, or `.gitignore` with `respect-gitignore` — gets no VL findings from
flake8 either (as `viewlint check --force-exclude` treats files named on its command line).
"""

from __future__ import annotations

import ast
import os
from pathlib import Path
from typing import Iterator, Optional, Sequence

from viewlint import __version__

# One resolver per working directory: each config file is read once per flake8 process.
_RESOLVERS: dict[str, object] = {}


def _settings_for(path: Path) -> "Settings":
    """The settings `viewlint check` would use for `path` (raises ConfigError on a bad config)."""
    from viewlint.config import CliOverrides, SettingsResolver

    cwd = os.getcwd()
    resolver = _RESOLVERS.get(cwd)
    if resolver is None:
        resolver = _RESOLVERS[cwd] = SettingsResolver(CliOverrides())
    return resolver.settings_for(path)  # type: ignore[attr-defined]


def _skipped_by_walk(path: Path, settings: "Settings") -> bool:
    from viewlint.files import skipped_by_walk

    return skipped_by_walk(path, settings)


class ViewlintChecker:
    """flake8 checker: one instance per file, `run()` yields `(row, col0, "VLxxx message", type)`."""

    name = "viewlint"
    version = __version__

    def __init__(self, tree: ast.AST, filename: str, lines: Optional[Sequence[str]] = None) -> None:
        # `tree` is unused (viewlint parses with libcst) but asking for it makes flake8 run us as an AST plugin.
        self.filename = filename
        self.lines = lines

    def _source(self) -> Optional[str]:
        """The file's text: from flake8's lines (which also covers stdin), else from disk."""
        if self.lines is not None:
            return "".join(self.lines)
        from viewlint.engine import DecodeError, decode_source

        try:
            return decode_source(Path(self.filename).read_bytes())
        except (OSError, DecodeError):
            return None  # flake8 reports unreadable files itself (E902)

    def run(self) -> Iterator[tuple[int, int, str, type]]:
        from viewlint.config import ConfigError
        from viewlint.engine import lint_text

        text = self._source()
        if text is None:
            return
        # flake8 names stdin "stdin" or "-" unless --stdin-display-name is given: resolve config from cwd then.
        path = Path(os.path.abspath(self.filename))
        try:
            settings = _settings_for(path)
        except ConfigError as error:
            yield 1, 0, f"VL002 configuration error: {error}", type(self)
            return
        if self.filename not in ("stdin", "-") and _skipped_by_walk(path, settings):
            return
        try:
            relative = os.path.relpath(path, settings.project_root)
        except ValueError:  # another drive on Windows
            relative = self.filename
        for diagnostic in lint_text(text, self.filename, settings, relative):
            yield diagnostic.start.row, diagnostic.start.column - 1, f"{diagnostic.code} {diagnostic.message}", type(self)


if False:  # typing only
    from viewlint.settings import Settings
