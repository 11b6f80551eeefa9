"""``[tool.viewlint]`` discovery and validation, and the merge with command-line flags.

Configuration is found the way Ruff finds it: for each file, the nearest
``viewlint.toml`` or ``pyproject.toml`` (holding a ``[tool.viewlint]`` table) in
the file's directory or above it. Every key is validated against the rule
registry; a mistake is one line naming the file, the key and what was expected.
"""

from __future__ import annotations

import difflib
import os
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Optional

from viewlint import registry
from viewlint.reading import FileTooLargeError, read_regular_file
from viewlint.settings import DEFAULT_INCLUDE, Settings

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - exercised only on 3.9/3.10
    import tomli as tomllib

__all__ = [
    "CONFIG_FILENAMES",
    "DEFAULT_EXCLUDE",
    "DEFAULT_INCLUDE",
    "CliOverrides",
    "ConfigError",
    "SettingsResolver",
    "find_config_in",
    "load_config",
    "merge",
]

# viewlint.toml wins over pyproject.toml in the same directory (as ruff.toml does in Ruff).
CONFIG_FILENAMES = ("viewlint.toml", "pyproject.toml")

# Directories and files that are never walked unless named on the command line (Ruff's list, plus ours).
DEFAULT_EXCLUDE: tuple[str, ...] = (
    ".bzr",
    ".direnv",
    ".eggs",
    ".git",
    ".git-rewrite",
    ".hg",
    ".ipynb_checkpoints",
    ".mypy_cache",
    ".nox",
    ".pants.d",
    ".pyenv",
    ".pytest_cache",
    ".pytype",
    ".ruff_cache",
    ".svn",
    ".tox",
    ".venv",
    ".viewlint_cache",
    ".vscode",
    "__pycache__",
    "__pypackages__",
    "_build",
    "buck-out",
    "build",
    "dist",
    "node_modules",
    "site-packages",
    "venv",
)

_SELECTOR_KEYS = ("select", "extend-select", "ignore", "extend-ignore")
_GLOB_KEYS = ("exclude", "extend-exclude", "include", "extend-include")
_STRING_LIST_KEYS = ("hot-functions", "long-lived-names", "cpu-names", "sync-allowed-contexts")
_KNOWN_KEYS = (
    *_SELECTOR_KEYS,
    "per-file-ignores",
    *_GLOB_KEYS,
    "respect-gitignore",
    *_STRING_LIST_KEYS,
    "rules",
)


class ConfigError(Exception):
    """A configuration problem; ``str()`` is one line naming the file, the key and what was wrong."""


def _type_name(value: Any) -> str:
    """The TOML-ish name of a Python value's type, for messages."""
    return type(value).__name__


def _display(path: Path) -> str:
    """A path as a user would type it: relative to the working directory when under it."""
    try:
        return os.path.relpath(path) if Path(os.path.abspath(path)).is_relative_to(Path.cwd()) else str(path)
    except (ValueError, OSError):  # different drive on Windows, or cwd deleted
        return str(path)


@dataclass(frozen=True)
class _Where:
    """Where a value came from, so every error message can say it the same way."""

    file: str
    table: str  # "[tool.viewlint]" for pyproject.toml, "" for viewlint.toml

    def error(self, key: str, problem: str, table: Optional[str] = None) -> ConfigError:
        """Build a one-line ConfigError for ``key``."""
        prefix = table if table is not None else self.table
        location = f"{prefix} {key}" if prefix else key
        return ConfigError(f"{self.file}: {location}: {problem}".replace("\n", " "))


def _string_list(where: _Where, key: str, value: Any) -> tuple[str, ...]:
    """Validate a list of strings and return it as a tuple."""
    if not isinstance(value, list):
        raise where.error(key, f"must be a list of strings, got {_type_name(value)}")
    for item in value:
        if not isinstance(item, str):
            raise where.error(key, f"must be a list of strings, got an item of type {_type_name(item)}: {item!r}")
    return tuple(value)


def _selectors(where: _Where, key: str, value: Any) -> tuple[str, ...]:
    """Validate a list of rule codes / prefixes / ALL, normalised to upper case."""
    codes = _string_list(where, key, value)
    for code in codes:
        if not registry.known_code_or_prefix(code):
            raise where.error(key, f"unknown rule code or prefix {code!r}")
    return tuple(code.upper() for code in codes)


def _per_file_ignores(where: _Where, key: str, value: Any) -> tuple[tuple[str, tuple[str, ...]], ...]:
    """Validate the ``per-file-ignores`` table: glob -> list of codes."""
    if not isinstance(value, dict):
        raise where.error(key, f"must be a table of glob = [codes], got {_type_name(value)}")
    pairs = []
    for glob, codes in value.items():
        pairs.append((glob, _selectors(where, f"{key} {glob!r}", codes)))
    return tuple(pairs)


def _check_option_type(where: _Where, table: str, name: str, default: Any, value: Any) -> Any:
    """Check a per-rule option against its default's type; lists become tuples."""
    # bool is an int subclass: check it first so `true` never passes for an int option.
    if isinstance(default, bool):
        if not isinstance(value, bool):
            raise where.error(name, f"must be a boolean, got {_type_name(value)}", table)
        return value
    if isinstance(default, int):
        if isinstance(value, bool) or not isinstance(value, int):
            raise where.error(name, f"must be an integer, got {_type_name(value)}", table)
        return value
    if isinstance(default, float):
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise where.error(name, f"must be a number, got {_type_name(value)}", table)
        return float(value)
    if isinstance(default, str):
        if not isinstance(value, str):
            raise where.error(name, f"must be a string, got {_type_name(value)}", table)
        return value
    if isinstance(default, (list, tuple)):
        if not isinstance(value, list):
            raise where.error(name, f"must be a list, got {_type_name(value)}", table)
        # An empty default says nothing about item types: accept scalars; else match the first item's type.
        expected = type(default[0]) if default else None
        for item in value:
            if isinstance(item, (list, dict)) or (expected is not None and type(item) is not expected):
                wanted = f"{expected.__name__} items" if expected else "scalar items"
                raise where.error(name, f"must be a list of {wanted}, got an item of type {_type_name(item)}", table)
        return tuple(value)
    if isinstance(default, dict):
        if not isinstance(value, dict):
            raise where.error(name, f"must be a table, got {_type_name(value)}", table)
        return tuple(sorted(value.items()))
    return value


def _rule_options(where: _Where, value: Any) -> tuple[tuple[str, tuple[tuple[str, Any], ...]], ...]:
    """Validate ``[tool.viewlint.rules.<CODE>]`` tables against each rule's ``options``."""
    rules_table = f"{where.table[:-1]}.rules]" if where.table else "[rules]"
    if not isinstance(value, dict):
        raise where.error("rules", f"must be a table of [rules.<CODE>] tables, got {_type_name(value)}")
    known = registry.all_rules()
    result = []
    for code, options in value.items():
        rule = known.get(code.upper())
        if rule is None:
            hint = _did_you_mean(code.upper(), list(known))
            raise where.error(code, f"unknown rule code {code!r}{hint}", rules_table)
        table = f"{rules_table[:-1]}.{rule.code}]"
        if not isinstance(options, dict):
            raise where.error(code, f"must be a table of options, got {_type_name(options)}", rules_table)
        checked = []
        for name, option_value in options.items():
            if name not in rule.options:
                expected = ", ".join(sorted(rule.options)) or "none"
                raise where.error(name, f"unknown option for {rule.code} (expected one of: {expected})", table)
            checked.append((name, _check_option_type(where, table, name, rule.options[name], option_value)))
        result.append((rule.code, tuple(sorted(checked))))
    return tuple(sorted(result))


def _did_you_mean(word: str, choices: list[str]) -> str:
    """A ``; did you mean 'x'?`` hint, or the empty string."""
    close = difflib.get_close_matches(word, choices, n=1)
    return f"; did you mean {close[0]!r}?" if close else ""


def _validate(where: _Where, table: dict[str, Any]) -> dict[str, Any]:
    """Validate a raw viewlint table; return Settings field values (snake_case keys)."""
    values: dict[str, Any] = {}
    for key, value in table.items():
        if key not in _KNOWN_KEYS:
            raise where.error(key, f"unknown key {key!r}{_did_you_mean(key, list(_KNOWN_KEYS))}")
        field = key.replace("-", "_")
        if key in _SELECTOR_KEYS:
            values[field] = _selectors(where, key, value)
        elif key in _GLOB_KEYS or key in _STRING_LIST_KEYS:
            values[field] = _string_list(where, key, value)
        elif key == "per-file-ignores":
            values[field] = _per_file_ignores(where, key, value)
        elif key == "respect-gitignore":
            if not isinstance(value, bool):
                raise where.error(key, f"must be a boolean, got {_type_name(value)}")
            values[field] = value
        elif key == "rules":
            values["rule_options"] = _rule_options(where, value)
    return values


# A configuration file is small; a bigger one is a mistake (or /dev/zero behind a symbolic link).
MAX_CONFIG_BYTES = 16 * 1024 * 1024


def _read_toml(path: Path) -> dict[str, Any]:
    """Parse a TOML file; unreadable or malformed files are a ConfigError."""
    try:
        data = read_regular_file(path, MAX_CONFIG_BYTES)
    except FileTooLargeError:
        raise ConfigError(f"{_display(path)}: cannot read: larger than {MAX_CONFIG_BYTES // 1048576} MiB") from None
    except OSError as error:
        raise ConfigError(f"{_display(path)}: cannot read: {error.strerror or error}") from error
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as error:
        raise ConfigError(f"{_display(path)}: {_undecodable(data, error)}") from None
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as error:
        raise ConfigError(f"{_display(path)}: invalid TOML: {error}".replace("\n", " ")) from error
    except RecursionError:  # tomllib recurses once per level of nested arrays and inline tables
        raise ConfigError(f"{_display(path)}: invalid TOML: arrays or tables nested too deeply") from None


def _undecodable(data: bytes, error: UnicodeDecodeError) -> str:
    """Where a config file stops being UTF-8 (TOML must be), and the key it happens in when known."""
    row = data.count(b"\n", 0, error.start) + 1
    column = error.start - (data.rfind(b"\n", 0, error.start) + 1) + 1
    message = f"line {row}, column {column}: invalid UTF-8 (byte 0x{data[error.start]:02x}); TOML files must be UTF-8"
    try:
        # The bad bytes become U+FFFD; the first key or value holding one names the setting.
        key = _key_holding(tomllib.loads(data.decode("utf-8", "replace")), "\ufffd")
    except (tomllib.TOMLDecodeError, RecursionError):
        key = None
    return f"{message} (in {key})" if key else message


def _key_holding(value: Any, needle: str, prefix: str = "") -> Optional[str]:
    """The dotted key of the first key or string value (depth first) that contains ``needle``."""
    if isinstance(value, dict):
        for key, item in value.items():
            dotted = f"{prefix}.{key}" if prefix else str(key)
            if needle in str(key):
                return dotted
            found = _key_holding(item, needle, dotted)
            if found:
                return found
    elif isinstance(value, list):
        for item in value:
            found = _key_holding(item, needle, prefix)
            if found:
                return found
    elif isinstance(value, str) and needle in value:
        return prefix or None
    return None


def _viewlint_table(path: Path) -> Optional[dict[str, Any]]:
    """The raw viewlint table of a config file, or None for a pyproject.toml without one."""
    data = _read_toml(path)
    if path.name != "pyproject.toml":
        return data
    tool = data.get("tool")
    if not isinstance(tool, dict) or "viewlint" not in tool:
        return None
    table = tool["viewlint"]
    if not isinstance(table, dict):
        raise ConfigError(f"{_display(path)}: [tool.viewlint]: must be a table, got {_type_name(table)}")
    return table


def load_config(path: Path) -> dict[str, Any]:
    """Read and validate one config file; returns Settings field values (snake_case keys).

    A ``pyproject.toml`` without a ``[tool.viewlint]`` table yields an empty dict.
    Raises ConfigError for anything malformed.
    """
    table = _viewlint_table(path)
    if table is None:
        return {}
    where = _Where(_display(path), "[tool.viewlint]" if path.name == "pyproject.toml" else "")
    return _validate(where, table)


def find_config_in(directory: Path) -> Optional[Path]:
    """The config file that counts in ``directory`` (not its parents), or None."""
    for name in CONFIG_FILENAMES:
        candidate = directory / name
        try:
            if not candidate.is_file():
                continue
        except OSError:  # a folder we may not search: no config is visible there, as for Ruff
            continue
        if name == "pyproject.toml" and _viewlint_table(candidate) is None:
            continue  # a pyproject.toml without [tool.viewlint] does not stop the walk up
        return candidate
    return None


@dataclass(frozen=True)
class CliOverrides:
    """Command-line flags that override configuration; ``None`` means the flag was not given."""

    select: Optional[tuple[str, ...]] = None
    extend_select: Optional[tuple[str, ...]] = None
    ignore: Optional[tuple[str, ...]] = None
    extend_ignore: Optional[tuple[str, ...]] = None
    # Added to the config's per-file-ignores (like Ruff's --extend-per-file-ignores).
    extend_per_file_ignores: tuple[tuple[str, tuple[str, ...]], ...] = ()
    exclude: Optional[tuple[str, ...]] = None
    extend_exclude: Optional[tuple[str, ...]] = None
    respect_gitignore: Optional[bool] = None
    ignore_noqa: bool = False
    prefilter: bool = True

    def validate(self) -> None:
        """Raise ConfigError naming the flag when a code or prefix is unknown."""
        for flag, codes in (
            ("--select", self.select),
            ("--extend-select", self.extend_select),
            ("--ignore", self.ignore),
            ("--extend-ignore", self.extend_ignore),
        ):
            for code in codes or ():
                if not registry.known_code_or_prefix(code):
                    raise ConfigError(f"{flag}: unknown rule code or prefix {code!r}")
        for glob, codes in self.extend_per_file_ignores:
            for code in codes:
                if not registry.known_code_or_prefix(code):
                    raise ConfigError(f"--per-file-ignores {glob!r}: unknown rule code or prefix {code!r}")


def merge(config: dict[str, Any], overrides: CliOverrides, project_root: Path, source: Optional[Path]) -> Settings:
    """Combine validated config values with CLI overrides the Ruff way.

    ``--select`` replaces the config's select and extend-select; ``--extend-select``,
    ``--ignore`` and ``--extend-ignore`` add to the config; ``--exclude`` replaces the
    exclude list (the defaults included); ``--extend-exclude`` adds.
    """

    def upper(codes: Optional[tuple[str, ...]]) -> tuple[str, ...]:
        return tuple(code.upper() for code in codes or ())

    select: Optional[tuple[str, ...]] = config.get("select")
    extend_select: tuple[str, ...] = config.get("extend_select", ())
    if overrides.select is not None:
        # As in Ruff, a CLI --select starts the selection afresh.
        select, extend_select = upper(overrides.select), ()
    extend_select = extend_select + upper(overrides.extend_select)
    exclude = config.get("exclude", DEFAULT_EXCLUDE)
    if overrides.exclude is not None:
        exclude = tuple(overrides.exclude)
    respect_gitignore = config.get("respect_gitignore", True)
    if overrides.respect_gitignore is not None:
        respect_gitignore = overrides.respect_gitignore
    return Settings(
        select=select,
        extend_select=extend_select,
        ignore=config.get("ignore", ()) + upper(overrides.ignore),
        extend_ignore=config.get("extend_ignore", ()) + upper(overrides.extend_ignore),
        per_file_ignores=config.get("per_file_ignores", ())
        + tuple((glob, upper(codes)) for glob, codes in overrides.extend_per_file_ignores),
        exclude=exclude,
        extend_exclude=config.get("extend_exclude", ()) + tuple(overrides.extend_exclude or ()),
        include=config.get("include", DEFAULT_INCLUDE),
        extend_include=config.get("extend_include", ()),
        respect_gitignore=respect_gitignore,
        hot_functions=config.get("hot_functions", ()),
        long_lived_names=config.get("long_lived_names", ()),
        cpu_names=config.get("cpu_names", ()),
        sync_allowed_contexts=config.get("sync_allowed_contexts", ()),
        rule_options=config.get("rule_options", ()),
        project_root=str(project_root),
        source=str(source) if source is not None else None,
        ignore_noqa=overrides.ignore_noqa,
        prefilter=overrides.prefilter,
    )


class SettingsResolver:
    """Settings per file from the nearest config file above it, each config read once."""

    def __init__(
        self,
        overrides: CliOverrides,
        config_path: Optional[Path] = None,
        isolated: bool = False,
        cwd: Optional[Path] = None,
    ) -> None:
        """Validate the overrides and, with ``config_path``, read that one config now."""
        self.overrides = overrides
        self.isolated = isolated
        self.cwd = Path(os.path.abspath(cwd if cwd is not None else Path.cwd()))
        overrides.validate()
        # directory -> config file governing it (None: no config at or above it)
        self._config_for_dir: dict[Path, Optional[Path]] = {}
        # config file -> its Settings, so each file is read and validated once
        self._settings_for_config: dict[Path, Settings] = {}
        self._fixed: Optional[Settings] = None
        self._fallback: Optional[Settings] = None
        if isolated:
            self._fixed = merge({}, overrides, self.cwd, None)
        elif config_path is not None:
            absolute = Path(os.path.abspath(config_path))
            if not absolute.is_file():
                raise ConfigError(f"{config_path}: config file not found")
            if absolute.name == "pyproject.toml" and _viewlint_table(absolute) is None:
                raise ConfigError(f"{_display(absolute)}: no [tool.viewlint] table")
            self._fixed = self._settings_from(absolute)

    def _settings_from(self, config: Path) -> Settings:
        """Settings for one config file, read once."""
        cached = self._settings_for_config.get(config)
        if cached is None:
            cached = merge(load_config(config), self.overrides, config.parent, config)
            self._settings_for_config[config] = cached
        return cached

    def _config_governing(self, directory: Path) -> Optional[Path]:
        """The nearest config at or above ``directory``; caches every directory visited."""
        visited: list[Path] = []
        found: Optional[Path] = None
        current = directory
        while True:
            if current in self._config_for_dir:
                found = self._config_for_dir[current]
                break
            visited.append(current)
            found = find_config_in(current)
            if found is not None or current.parent == current:
                break
            current = current.parent
        for seen in visited:
            self._config_for_dir[seen] = found
        return found

    def settings_for_dir(self, directory: Path) -> Settings:
        """Settings that govern the files directly inside ``directory``."""
        if self._fixed is not None:
            return self._fixed
        config = self._config_governing(Path(os.path.abspath(directory)))
        if config is None:
            return self.root_settings()
        return self._settings_from(config)

    def settings_for(self, path: Path) -> Settings:
        """Settings for one file: from the nearest config above it (or the root settings)."""
        if self._fixed is not None:
            return self._fixed
        return self.settings_for_dir(Path(os.path.abspath(path)).parent)

    def root_settings(self) -> Settings:
        """Settings for the working directory; also used for files with no config above them."""
        if self._fixed is not None:
            return self._fixed
        if self._fallback is None:
            config = self._config_governing(self.cwd)
            self._fallback = self._settings_from(config) if config else merge({}, self.overrides, self.cwd, None)
        return self._fallback
