"""`[tool.viewlint]` discovery, validation messages, and the merge with CLI flags."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any, ClassVar

import pytest

import viewlint.registry as registry
from viewlint.config import DEFAULT_EXCLUDE, CliOverrides, ConfigError, SettingsResolver
from viewlint.rule import Rule


class FakeInplace(Rule):
    code = "VL201"
    name = "inplace-on-advanced-index"
    options: ClassVar[dict[str, Any]] = {"extra-methods": [], "strict": False, "limit": 3, "ratio": 0.5}


class FakeSync(Rule):
    code = "VL401"
    name = "host-sync-scalar"


class FakeOff(Rule):
    code = "VL301"
    name = "redundant-contiguous"
    default_enabled = False


@pytest.fixture(autouse=True)
def fake_rules(monkeypatch: pytest.MonkeyPatch) -> None:
    rules: dict[str, type[Rule]] = {"VL201": FakeInplace, "VL301": FakeOff, "VL401": FakeSync}
    monkeypatch.setattr(registry, "all_rules", lambda: rules)


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def resolver(tmp_path: Path, **overrides: Any) -> SettingsResolver:
    return SettingsResolver(CliOverrides(**overrides), cwd=tmp_path)


def config_error(tmp_path: Path, body: str, monkeypatch: pytest.MonkeyPatch) -> str:
    write(tmp_path / "pyproject.toml", f"[tool.viewlint]\n{body}\n")
    monkeypatch.chdir(tmp_path)
    with pytest.raises(ConfigError) as raised:
        resolver(tmp_path).settings_for(tmp_path / "a.py")
    message = str(raised.value)
    assert "\n" not in message
    return message


def test_nearest_config_wins(tmp_path: Path) -> None:
    write(tmp_path / "pyproject.toml", '[tool.viewlint]\nignore = ["VL401"]\n')
    write(tmp_path / "sub" / "pyproject.toml", '[tool.viewlint]\nselect = ["VL2"]\n')
    resolve = resolver(tmp_path)
    outer = resolve.settings_for(tmp_path / "a.py")
    inner = resolve.settings_for(tmp_path / "sub" / "deep" / "b.py")
    assert outer.ignore == ("VL401",)
    assert outer.enabled_codes == {"VL201"}
    assert inner.select == ("VL2",)
    assert inner.project_root == str(tmp_path / "sub")
    assert inner.source == str(tmp_path / "sub" / "pyproject.toml")


def test_each_config_file_is_read_once(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import viewlint.config as config

    write(tmp_path / "pyproject.toml", '[tool.viewlint]\nignore = ["VL401"]\n')
    reads: list[Path] = []
    original = config.load_config
    monkeypatch.setattr(config, "load_config", lambda path: reads.append(path) or original(path))
    resolve = resolver(tmp_path)
    first = resolve.settings_for(tmp_path / "a" / "x.py")
    second = resolve.settings_for(tmp_path / "b" / "y.py")
    assert first is second
    assert reads == [tmp_path / "pyproject.toml"]


def test_viewlint_toml_wins_over_pyproject_in_same_directory(tmp_path: Path) -> None:
    write(tmp_path / "pyproject.toml", '[tool.viewlint]\nselect = ["VL4"]\n')
    write(tmp_path / "viewlint.toml", 'select = ["VL2"]\n')
    settings = resolver(tmp_path).settings_for(tmp_path / "a.py")
    assert settings.select == ("VL2",)
    assert settings.source == str(tmp_path / "viewlint.toml")


def test_pyproject_without_table_is_skipped(tmp_path: Path) -> None:
    write(tmp_path / "pyproject.toml", '[tool.viewlint]\nextend-select = ["VL301"]\n')
    write(tmp_path / "pkg" / "pyproject.toml", '[project]\nname = "pkg"\n')
    settings = resolver(tmp_path).settings_for(tmp_path / "pkg" / "a.py")
    assert settings.extend_select == ("VL301",)
    assert settings.project_root == str(tmp_path)


def test_defaults_without_any_config(tmp_path: Path) -> None:
    settings = resolver(tmp_path).settings_for(tmp_path / "a.py")
    assert settings.select is None
    assert settings.exclude == DEFAULT_EXCLUDE
    assert settings.respect_gitignore is True
    assert settings.enabled_codes == {"VL201", "VL401"}
    assert settings.project_root == str(tmp_path)


def test_all_keys_map_to_settings(tmp_path: Path) -> None:
    write(
        tmp_path / "pyproject.toml",
        """
[tool.viewlint]
select = ["all"]
extend-select = ["VL301"]
ignore = ["VL4"]
extend-ignore = ["VL201"]
exclude = ["gen"]
extend-exclude = ["legacy/*.py"]
respect-gitignore = false
hot-functions = ["step_*"]
long-lived-names = ["memo"]
cpu-names = ["mask_cpu"]

[tool.viewlint.per-file-ignores]
"tests/*" = ["VL2"]

[tool.viewlint.rules.VL201]
extra-methods = ["scatter_"]
limit = 5
ratio = 1
""",
    )
    settings = resolver(tmp_path).settings_for(tmp_path / "a.py")
    assert settings.select == ("ALL",)
    assert settings.extend_select == ("VL301",)
    assert settings.ignore == ("VL4",)
    assert settings.extend_ignore == ("VL201",)
    assert settings.exclude == ("gen",)
    assert settings.extend_exclude == ("legacy/*.py",)
    assert settings.respect_gitignore is False
    assert settings.hot_functions == ("step_*",)
    assert settings.long_lived_names == ("memo",)
    assert settings.cpu_names == ("mask_cpu",)
    assert settings.per_file_ignores == (("tests/*", ("VL2",)),)
    assert settings.rule_options == (("VL201", (("extra-methods", ("scatter_",)), ("limit", 5), ("ratio", 1.0))),)
    assert settings.options_for("VL201")["extra-methods"] == ("scatter_",)
    assert settings.enabled_codes == {"VL301"}
    hash(settings)  # still hashable with rule options


def test_per_file_ignores_with_negation(tmp_path: Path) -> None:
    write(
        tmp_path / "viewlint.toml",
        '[per-file-ignores]\n"tests/*" = ["VL201"]\n"!src/*" = ["VL4"]\n',
    )
    settings = resolver(tmp_path).settings_for(tmp_path / "a.py")
    assert settings.codes_for("tests/test_a.py") == set()  # VL201 by the glob, VL401 by the negation
    assert settings.codes_for("src/model.py") == {"VL201", "VL401"}
    assert settings.codes_for("scripts/run.py") == {"VL201"}


def test_unknown_key(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    message = config_error(tmp_path, 'selct = ["VL2"]', monkeypatch)
    assert message == "pyproject.toml: [tool.viewlint] selct: unknown key 'selct'; did you mean 'select'?"


def test_unknown_code(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    message = config_error(tmp_path, 'select = ["VL999"]', monkeypatch)
    assert message == "pyproject.toml: [tool.viewlint] select: unknown rule code or prefix 'VL999'"


def test_unknown_code_in_per_file_ignores(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    message = config_error(tmp_path, '[tool.viewlint.per-file-ignores]\n"a.py" = ["VL9"]', monkeypatch)
    assert message == "pyproject.toml: [tool.viewlint] per-file-ignores 'a.py': unknown rule code or prefix 'VL9'"


def test_wrong_type_boolean(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    message = config_error(tmp_path, 'respect-gitignore = "yes"', monkeypatch)
    assert message == "pyproject.toml: [tool.viewlint] respect-gitignore: must be a boolean, got str"


def test_wrong_type_list(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    message = config_error(tmp_path, 'exclude = "build"', monkeypatch)
    assert message == "pyproject.toml: [tool.viewlint] exclude: must be a list of strings, got str"


def test_viewlint_toml_errors_have_no_table_prefix(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    write(tmp_path / "viewlint.toml", "hot-functions = [1]\n")
    monkeypatch.chdir(tmp_path)
    with pytest.raises(ConfigError, match=r"^viewlint.toml: hot-functions: must be a list of strings, got an item"):
        resolver(tmp_path).root_settings()


def test_invalid_toml_is_one_line(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    write(tmp_path / "viewlint.toml", "select = [\n")
    monkeypatch.chdir(tmp_path)
    with pytest.raises(ConfigError) as raised:
        resolver(tmp_path).root_settings()
    assert str(raised.value).startswith("viewlint.toml: invalid TOML:")
    assert "\n" not in str(raised.value)


@pytest.mark.parametrize(
    ("body", "expected"),
    [
        (
            "[tool.viewlint.rules.VL999]\nx = 1",
            "pyproject.toml: [tool.viewlint.rules] VL999: unknown rule code 'VL999'",
        ),
        (
            "[tool.viewlint.rules.VL201]\nextra-method = []",
            "pyproject.toml: [tool.viewlint.rules.VL201] extra-method: unknown option for VL201 "
            "(expected one of: extra-methods, limit, ratio, strict)",
        ),
        (
            '[tool.viewlint.rules.VL201]\nextra-methods = "scatter_"',
            "pyproject.toml: [tool.viewlint.rules.VL201] extra-methods: must be a list, got str",
        ),
        (
            "[tool.viewlint.rules.VL201]\nstrict = 1",
            "pyproject.toml: [tool.viewlint.rules.VL201] strict: must be a boolean, got int",
        ),
        (
            "[tool.viewlint.rules.VL201]\nlimit = true",
            "pyproject.toml: [tool.viewlint.rules.VL201] limit: must be an integer, got bool",
        ),
        (
            '[tool.viewlint.rules.VL201]\nratio = "half"',
            "pyproject.toml: [tool.viewlint.rules.VL201] ratio: must be a number, got str",
        ),
        (
            "[tool.viewlint.rules.VL401]\nanything = 1",
            "pyproject.toml: [tool.viewlint.rules.VL401] anything: unknown option for VL401 (expected one of: none)",
        ),
    ],
)
def test_rule_option_errors(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, body: str, expected: str) -> None:
    assert config_error(tmp_path, body, monkeypatch) == expected


def test_cli_select_replaces_config_select(tmp_path: Path) -> None:
    write(tmp_path / "viewlint.toml", 'select = ["VL2"]\nextend-select = ["VL301"]\nignore = ["VL4"]\n')
    settings = resolver(tmp_path, select=("vl4",)).root_settings()
    assert settings.select == ("VL4",)
    assert settings.extend_select == ()
    assert settings.enabled_codes == set()  # the config's ignore VL4 still applies (tie: ignore wins)


def test_cli_extend_select_and_ignore_add_to_config(tmp_path: Path) -> None:
    write(tmp_path / "viewlint.toml", 'extend-select = ["VL301"]\nignore = ["VL4"]\nextend-ignore = ["VL3"]\n')
    settings = resolver(
        tmp_path, extend_select=("VL401",), ignore=("VL201",), extend_ignore=("VL2",)
    ).root_settings()
    assert settings.extend_select == ("VL301", "VL401")
    assert settings.ignore == ("VL4", "VL201")
    assert settings.extend_ignore == ("VL3", "VL2")


def test_cli_excludes_and_gitignore_flag(tmp_path: Path) -> None:
    write(tmp_path / "viewlint.toml", 'extend-exclude = ["old"]\nrespect-gitignore = false\n')
    settings = resolver(
        tmp_path, exclude=("gen",), extend_exclude=("tmp",), respect_gitignore=True, ignore_noqa=True, prefilter=False
    ).root_settings()
    assert settings.exclude == ("gen",)
    assert settings.extend_exclude == ("old", "tmp")
    assert settings.respect_gitignore is True
    assert settings.ignore_noqa is True
    assert settings.prefilter is False


def test_cli_per_file_ignores_extend_config(tmp_path: Path) -> None:
    write(tmp_path / "viewlint.toml", '[per-file-ignores]\n"a.py" = ["VL2"]\n')
    settings = resolver(tmp_path, extend_per_file_ignores=(("b.py", ("vl4",)),)).root_settings()
    assert settings.per_file_ignores == (("a.py", ("VL2",)), ("b.py", ("VL4",)))
    assert settings.codes_for("b.py") == {"VL201"}


def test_cli_unknown_code_names_the_flag(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match=r"^--extend-select: unknown rule code or prefix 'VL7'$"):
        resolver(tmp_path, extend_select=("VL7",))


def test_isolated_reads_no_config(tmp_path: Path) -> None:
    write(tmp_path / "viewlint.toml", "selct = 1\n")  # would be an error if read
    settings = SettingsResolver(CliOverrides(ignore=("VL401",)), isolated=True, cwd=tmp_path).settings_for(
        tmp_path / "a.py"
    )
    assert settings.source is None
    assert settings.project_root == str(tmp_path)
    assert settings.enabled_codes == {"VL201"}


def test_explicit_config_applies_to_every_file(tmp_path: Path) -> None:
    shared = write(tmp_path / "conf" / "strict.toml", 'select = ["ALL"]\n')
    write(tmp_path / "src" / "viewlint.toml", 'select = ["VL2"]\n')
    resolve = SettingsResolver(CliOverrides(), config_path=shared, cwd=tmp_path)
    settings = resolve.settings_for(tmp_path / "src" / "a.py")
    assert settings.select == ("ALL",)
    assert settings.project_root == str(tmp_path / "conf")
    assert resolve.root_settings() is settings


def test_explicit_config_missing(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="config file not found"):
        SettingsResolver(CliOverrides(), config_path=tmp_path / "nope.toml", cwd=tmp_path)


def test_files_without_config_above_use_root_settings(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    project = tmp_path / "project"
    write(project / "viewlint.toml", 'ignore = ["VL4"]\n')
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    resolve = resolver(project)
    assert resolve.settings_for(outside / "x.py") is resolve.root_settings()
    assert resolve.root_settings().ignore == ("VL4",)


def test_relative_paths_resolve_from_process_cwd(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    write(tmp_path / "pkg" / "viewlint.toml", 'ignore = ["VL4"]\n')
    monkeypatch.chdir(tmp_path)
    settings = SettingsResolver(CliOverrides()).settings_for(Path("pkg") / "a.py")
    assert settings.ignore == ("VL4",)
    assert settings.project_root == os.path.join(str(tmp_path), "pkg")
