"""The `viewlint` command line: `viewlint [check] PATHS`, `viewlint rule CODE`, `viewlint verify`, `viewlint server`.

Exit codes follow Ruff and flake8: 0 no findings, 1 findings, 2 usage, configuration
or internal error; 130 when interrupted (Ctrl-C), 143 when terminated (SIGTERM).
Findings go to stdout, the summary to stderr.
"""

from __future__ import annotations

import errno
import json
import os
import shutil
import sys
from pathlib import Path
from typing import Any, BinaryIO, Optional, Sequence

import click

from viewlint import __version__

EXIT_OK, EXIT_FINDINGS, EXIT_ERROR = 0, 1, 2


class DefaultGroup(click.Group):
    """`viewlint PATHS` means `viewlint check PATHS`, as `ruff PATHS` once meant `ruff check`.

    A first word that is no path but looks like a mistyped command (`viewlint chek src`) is
    reported as an unknown command with the nearest one, not as a missing file.
    """

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        if not args or (args[0] not in self.commands and args[0] not in ("--help", "-h", "--version")):
            first = args[0] if args else ""
            if first and not first.startswith("-") and not os.path.lexists(first):
                import difflib

                close = difflib.get_close_matches(first, list(self.commands), n=1, cutoff=0.6)
                if close:
                    raise _fail(f"unknown command {first!r}; did you mean {close[0]!r}? "
                                f"(`viewlint {first}` lints a path named {first!r} only when one exists)")
            args = ["check", *args]
        return super().parse_args(ctx, args)

    def invoke(self, ctx: click.Context) -> Any:
        """Ctrl-C exits 130 and SIGTERM 143 (128 + the signal), after every cleanup ran; never a traceback."""
        from viewlint.interrupts import (EXIT_INTERRUPTED, EXIT_TERMINATED, Terminated, handle_stop_signals,
                                         raise_if_stopped)

        try:
            with handle_stop_signals():
                try:
                    return super().invoke(ctx)
                finally:
                    raise_if_stopped()  # a stop whose exception Python dropped (a finaliser ran the handler)
        except BrokenPipeError:
            # The reader of stdout went away (`| head`) where no exit code was settled yet: as Ruff, 0.
            from viewlint.console import silence_stdout

            silence_stdout()
            raise click.exceptions.Exit(EXIT_OK) from None
        except KeyboardInterrupt:
            raise click.exceptions.Exit(EXIT_INTERRUPTED) from None
        except Terminated:
            raise click.exceptions.Exit(EXIT_TERMINATED) from None


def _codes(values: Sequence[str]) -> Optional[tuple[str, ...]]:
    """`--select VL1,VL2 --select VL3` -> ("VL1", "VL2", "VL3"); None when not given."""
    if not values:
        return None
    return tuple(code.strip().upper() for value in values for code in value.split(",") if code.strip())


def _fail(message: str) -> "click.exceptions.Exit":
    click.echo(f"viewlint: error: {message}", err=True)
    return click.exceptions.Exit(EXIT_ERROR)


@click.group(cls=DefaultGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, "--version", prog_name="viewlint", message="%(prog)s %(version)s")
def main() -> None:
    """viewlint: find the memory and speed bugs that come from PyTorch tensor views and copies.

    `viewlint PATHS` is short for `viewlint check PATHS` (`viewlint check --help` lists its options).
    """
    from viewlint.console import protect_standard_streams

    protect_standard_streams()


@main.command()
@click.argument("paths", nargs=-1, type=click.Path(readable=False))  # an unreadable path is VL001, not a usage error
@click.option("--select", multiple=True, metavar="CODES", help="Rules to enable (codes, prefixes, ALL); replaces the configured set.")
@click.option("--extend-select", multiple=True, metavar="CODES", help="Rules to enable in addition to the configured set.")
@click.option("--ignore", multiple=True, metavar="CODES", help="Rules to disable.")
@click.option("--extend-ignore", multiple=True, metavar="CODES", help="Rules to disable, in addition to the configured ones.")
@click.option("--per-file-ignores", "per_file_ignores", multiple=True, metavar="GLOB:CODES", help="Disable rules for files matching a glob.")
@click.option("--exclude", multiple=True, metavar="GLOBS", help="Files and folders to skip (replaces the defaults).")
@click.option("--extend-exclude", multiple=True, metavar="GLOBS", help="Files and folders to skip, in addition.")
@click.option("--respect-gitignore/--no-respect-gitignore", default=None, help="Skip files that .gitignore ignores (default: on).")
@click.option("--force-exclude", is_flag=True, help="Apply exclusions to paths given on the command line too.")
@click.option("--output-format", type=click.Choice(["concise", "full", "json", "json-lines", "sarif", "github", "pylint", "junit"]), default=None, help="How findings are printed (default: concise; $VIEWLINT_OUTPUT_FORMAT).")
@click.option("-o", "--output-file", type=click.Path(dir_okay=False, writable=True), help="Write findings to this file instead of stdout.")
@click.option("--statistics", is_flag=True, help="Print the number of findings per rule instead of the findings.")
@click.option("--show-files", is_flag=True, help="List the files that would be linted, and exit.")
@click.option("--show-settings", is_flag=True, help="Print the settings used for the first file that would be linted (or the current folder), and exit.")
@click.option("--exit-zero", is_flag=True, help="Exit 0 even when there are findings.")
@click.option("-q", "--quiet", is_flag=True, help="Print findings only: no summary, no progress bar.")
@click.option("--color", "color", type=click.Choice(["auto", "always", "never"]), default="auto", show_default=True, help="Colour the findings (auto: on a terminal, unless $NO_COLOR; $FORCE_COLOR forces it).")
@click.option("-j", "--jobs", type=click.IntRange(min=1), default=None, help="Worker processes (default: all cores).")
@click.option("--no-cache", is_flag=True, help="Do not read or write the result cache.")
@click.option("--cache-dir", type=click.Path(readable=False), default=None, help="Cache folder (default: .viewlint_cache).")
@click.option("--config", "config_path", type=click.Path(dir_okay=False), default=None, help="Use this pyproject.toml or viewlint.toml for every file.")
@click.option("--isolated", is_flag=True, help="Ignore all configuration files.")
@click.option("--stdin-filename", default=None, help="The name of the file read from stdin (`-`), for configuration and output.")
@click.option("--ignore-noqa", is_flag=True, help="Report findings even on lines with `# noqa`.")
@click.option("--add-noqa", is_flag=True, help="Add `# noqa: CODE` to every line with a finding.")
@click.option("--no-prefilter", is_flag=True, help="Parse every file fully, even those no rule can fire on (slower; same findings).")
@click.option("--fix/--no-fix", "fix", default=False, help="Apply safe fixes in place (and unsafe ones with --unsafe-fixes).")
@click.option("--unsafe-fixes/--no-unsafe-fixes", "unsafe_fixes", default=False, help="Also apply (with --fix) or advertise fixes that may change behaviour.")
@click.option("--diff", is_flag=True, help="Print the fixes as a unified diff instead of writing them; exit 1 when there is one.")
@click.option("--show-fixes/--no-show-fixes", "show_fixes", default=False, help="List what --fix fixed, per file and rule (on stderr).")
@click.option("--exit-non-zero-on-fix", is_flag=True, help="With --fix, exit 1 when anything was fixed, even if nothing remains.")
@click.option("--verify", is_flag=True, help="Run each file with findings (as __main__, in a child process in a temporary folder) and attach a measured verdict to each finding.")
@click.option("--verify-timeout", type=click.FloatRange(min=0, min_open=True), default=60.0, show_default=True, metavar="SECONDS", help="With --verify: stop a file that runs longer than this.")
@click.option("--device", type=click.Choice(["auto", "cpu", "cuda"]), default="auto", show_default=True, help="With --verify: where tensors are allocated (auto: cuda when available, else cpu).")
@click.option("--verify-root", "verify_roots", multiple=True, type=click.Path(file_okay=False), metavar="DIR", help="With --verify: the folder your packages import from (default: found from pyproject.toml/setup.cfg, src/ and __init__.py files).")
@click.option("--verify-cwd", type=click.Path(file_okay=False, exists=True), default=None, metavar="DIR", help="With --verify: run the files in DIR (default: a fresh temporary folder).")
def check(paths: tuple[str, ...], **options: Any) -> None:
    """Lint PATHS (files or folders; default `.`; `-` reads stdin)."""
    code = run_check(paths, **options)
    sys.exit(code)


def run_check(
    paths: tuple[str, ...],
    *,
    select: Sequence[str] = (),
    extend_select: Sequence[str] = (),
    ignore: Sequence[str] = (),
    extend_ignore: Sequence[str] = (),
    per_file_ignores: Sequence[str] = (),
    exclude: Sequence[str] = (),
    extend_exclude: Sequence[str] = (),
    respect_gitignore: Optional[bool] = None,
    force_exclude: bool = False,
    output_format: Optional[str] = None,
    output_file: Optional[str] = None,
    statistics: bool = False,
    show_files: bool = False,
    show_settings: bool = False,
    exit_zero: bool = False,
    quiet: bool = False,
    color: str = "auto",
    jobs: Optional[int] = None,
    no_cache: bool = False,
    cache_dir: Optional[str] = None,
    config_path: Optional[str] = None,
    isolated: bool = False,
    stdin_filename: Optional[str] = None,
    ignore_noqa: bool = False,
    add_noqa: bool = False,
    no_prefilter: bool = False,
    verify: bool = False,
    verify_timeout: float = 60.0,
    device: str = "auto",
    verify_run: Optional[str] = None,
    verify_roots: Sequence[str] = (),
    verify_cwd: Optional[str] = None,
    fix: bool = False,
    unsafe_fixes: bool = False,
    diff: bool = False,
    show_fixes: bool = False,
    exit_non_zero_on_fix: bool = False,
) -> int:
    """The `check` command; returns the exit code."""
    from viewlint.config import CliOverrides, ConfigError, SettingsResolver
    from viewlint.engine import FileResult, lint_notebook, lint_text, run
    from viewlint.interrupts import in_worker
    from viewlint.notebook import is_notebook
    from viewlint.files import PathNotFoundError, SourceFile, discover
    from viewlint.files import _force_excluded as force_excluded

    output_format = output_format or os.environ.get("VIEWLINT_OUTPUT_FORMAT") or "concise"
    try:
        overrides = CliOverrides(
            select=_codes(select),
            extend_select=_codes(extend_select),
            ignore=_codes(ignore),
            extend_ignore=_codes(extend_ignore),
            extend_per_file_ignores=tuple(_per_file_ignore(value) for value in per_file_ignores),
            exclude=tuple(exclude) or None,
            extend_exclude=tuple(extend_exclude) or None,
            respect_gitignore=respect_gitignore,
            ignore_noqa=ignore_noqa,
            prefilter=not no_prefilter,
        )
        overrides.validate()
        _warn_reserved(overrides)
        if config_path is not None and not Path(config_path).is_file():
            raise ConfigError(f"{config_path}: configuration file not found")
        resolver = SettingsResolver(overrides, Path(config_path) if config_path else None, isolated=isolated)
        results: list[FileResult]
        fixing = fix or diff
        if fixing and (verify or verify_run is not None):
            raise ValueError("--verify cannot be combined with --fix or --diff")
        if fixing and add_noqa:
            raise ValueError("--add-noqa cannot be combined with --fix or --diff")
        files: list[SourceFile] = []
        if paths == ("-",) or (not paths and stdin_filename):
            display = stdin_filename or "-"
            settings = resolver.settings_for(Path(display).absolute()) if stdin_filename else resolver.root_settings()
            # As for paths on the command line: the file or any folder above it inside the project.
            if force_exclude and stdin_filename and force_excluded(Path(stdin_filename).absolute(), settings):
                results = []
            elif fixing:
                return _fix_stdin(display, settings, diff=diff, unsafe_fixes=unsafe_fixes, output_format=output_format,
                                  output_file=output_file, statistics=statistics, quiet=quiet, exit_zero=exit_zero,
                                  show_fixes=show_fixes, exit_non_zero_on_fix=exit_non_zero_on_fix)
            else:
                # per-file-ignores match the project-relative path, even for an absolute --stdin-filename.
                relative = os.path.relpath(Path(display).absolute(), settings.project_root) if stdin_filename else display
                if is_notebook(display):
                    try:
                        data = _stdin_bytes()
                    except OSError as error:
                        results = [FileResult(display, [_stdin_problem(display, error)], None)]
                    else:
                        found, _, notebook_text = lint_notebook(data, display, settings, relative)
                        results = [FileResult(display, found, notebook_text)]
                else:
                    text, problem = _read_stdin(display)
                    if problem is not None:
                        results = [FileResult(display, [problem], None)]
                    else:
                        found = in_worker(lint_text, text, display, settings, relative)
                        results = [FileResult(display, found, text)]
        else:
            files = discover(list(paths) or ["."], resolver, force_exclude=force_exclude)
            if show_files or show_settings:
                return _show(files, resolver, show_settings)
            if not files:
                click.echo("viewlint: warning: no Python files found", err=True)
                return EXIT_OK
            cache_directory = None if no_cache else _usable_cache(Path(cache_dir or ".viewlint_cache"))
            from viewlint.terminal import ProgressBar

            bar = ProgressBar.for_stderr(len(files), quiet=quiet)
            try:
                results = run(files, jobs or os.cpu_count() or 1, cache_directory, bar.advance if bar else None)
            finally:
                if bar is not None:
                    bar.close()
    except ConfigError as error:
        raise _fail(str(error))
    except PathNotFoundError as error:
        raise _fail(str(error))
    except ValueError as error:
        raise _fail(str(error))

    if fixing:
        return _fix_files(files, results, jobs or os.cpu_count() or 1, diff=diff, unsafe_fixes=unsafe_fixes,
                          output_format=output_format, output_file=output_file, statistics=statistics, quiet=quiet,
                          exit_zero=exit_zero, show_fixes=show_fixes, exit_non_zero_on_fix=exit_non_zero_on_fix)
    diagnostics = sorted((d for r in results for d in r.diagnostics), key=lambda d: d.sort_key)
    if verify or verify_run is not None:
        diagnostics = _verify(diagnostics, command=verify_run, timeout=verify_timeout, device=device, quiet=quiet,
                              roots=verify_roots, cwd=verify_cwd)
    if add_noqa:
        return _add_noqa(results, quiet)
    _emit(diagnostics, results, output_format, output_file, statistics, unsafe_fixes=unsafe_fixes, color=color)
    internal = [d for d in diagnostics if d.is_internal_error]
    if not quiet:
        from viewlint.fix import is_applicable

        fixable = sum(1 for d in diagnostics if is_applicable(d, unsafe_fixes))
        if diagnostics:
            noun = "finding" if len(diagnostics) == 1 else "findings"
            click.echo(f"Found {len(diagnostics)} {noun} ({fixable} fixable).", err=True)
            if not statistics:
                from viewlint.summary import per_rule_lines

                for line in per_rule_lines(diagnostics, unsafe_fixes):
                    click.echo(line, err=True)
            _hidden_fixes_note(diagnostics, unsafe_fixes)
        else:
            click.echo("All checks passed!", err=True)
    if internal:
        return EXIT_ERROR
    # A finding that --verify refuted does not fail the run.
    if any(d.verdict is None or d.verdict.status != "refuted" for d in diagnostics) and not exit_zero:
        return EXIT_FINDINGS
    return EXIT_OK


def _warn_reserved(overrides: Any) -> None:
    """As Ruff does for codes it cannot ignore: say so, instead of accepting them in silence."""
    from viewlint.diagnostics import RESERVED_CODES

    for flag, codes in (("--ignore", overrides.ignore), ("--extend-ignore", overrides.extend_ignore)):
        named = [code for code in codes or () if code in RESERVED_CODES]
        if named:
            click.echo(f"viewlint: warning: {flag}: {', '.join(named)} cannot be ignored: files that cannot be "
                       "parsed or read, and internal errors, are always reported (exclude the file instead)", err=True)


def _show(files: Sequence[Any], resolver: Any, show_settings: bool) -> int:
    """`--show-files`: one path a line; `--show-settings`: the resolved settings of the first file."""
    from dataclasses import fields

    from viewlint.console import write_stdout

    if not show_settings:
        write_stdout("".join(f"{source_file.path}\n" for source_file in files))
        return EXIT_OK
    target = files[0].path if files else Path(".")
    settings = files[0].settings if files else resolver.root_settings()
    lines = [f"Resolved settings for: {str(target)!r}",
             f"Settings path: {settings.source!r}" if settings.source else "Settings path: none (defaults)", ""]
    for item in fields(settings):
        value = getattr(settings, item.name)
        if item.name == "source":
            continue
        lines.append(f"{item.name.replace('_', '-')} = {json.dumps(_plain(value))}")
    lines.append(f"enabled-rules = {json.dumps(sorted(settings.codes_for(os.path.relpath(Path(target).absolute(), settings.project_root))))}")
    write_stdout("\n".join(lines) + "\n")
    return EXIT_OK


def _plain(value: Any) -> Any:
    """Tuples (of tuples) as lists, for JSON."""
    if isinstance(value, (tuple, list)):
        return [_plain(item) for item in value]
    return value


def _usable_cache(directory: Path) -> Optional[Path]:
    """The cache folder, or None (with a warning) when it cannot be used: the run goes on uncached."""
    from viewlint.cache import Cache

    problem = Cache(directory).problem()
    if problem is None:
        return directory
    click.echo(f"viewlint: warning: cannot use the cache ({problem}); linting without it", err=True)
    return None


def _verify(diagnostics: list, *, command: Optional[str], timeout: float, device: str, quiet: bool,
            roots: Sequence[str] = (), cwd: Optional[str] = None) -> list:
    """`--verify` / `verify --run`: run the flagged code in a child process and attach verdicts."""
    from viewlint.verify.runner import VerifyError, verify_command, verify_scripts

    try:
        if command is None:
            result = verify_scripts(diagnostics, timeout=timeout, device=device, roots=roots, cwd=cwd)
        else:
            result = verify_command(diagnostics, command, timeout=timeout, device=device, roots=roots)
    except VerifyError as error:
        raise _fail(str(error))
    for line in result.messages(include_summary=not quiet):
        click.echo(f"viewlint: verify: {line}", err=True)
    context = click.get_current_context(silent=True)
    if context is not None and result.command_status is not None:
        context.meta[_COMMAND_STATUS] = result.command_status  # `verify` exits with it
    return result.diagnostics


# Where `_verify` leaves the failed status of `verify --run`'s command for the `verify` command.
_COMMAND_STATUS = "viewlint.verify.command_status"


def _per_file_ignore(value: str) -> tuple[str, tuple[str, ...]]:
    glob, sep, codes = value.rpartition(":")
    if not sep or not glob:
        raise ValueError(f"--per-file-ignores: expected GLOB:CODES, got {value!r}")
    return glob, tuple(c.strip().upper() for c in codes.split(",") if c.strip())


def _stdin_buffer() -> BinaryIO:
    """The binary stdin; OSError when the shell closed it (`<&-`: sys.stdin is None)."""
    buffer = getattr(sys.stdin, "buffer", None)
    if buffer is None:
        raise OSError(errno.EBADF, "it is closed")
    return buffer


def _stdin_bytes() -> bytes:
    """stdin's bytes, at most as many as a file may hold (FileTooLargeError past that)."""
    from viewlint.engine import MAX_FILE_BYTES
    from viewlint.reading import read_capped

    return read_capped(_stdin_buffer(), MAX_FILE_BYTES)


def _stdin_problem(display: str, error: Exception) -> Any:
    """The VL001 finding for stdin that cannot be read (closed, too large) or decoded."""
    from viewlint.engine import DecodeError, read_error, too_large_message
    from viewlint.reading import FileTooLargeError

    if isinstance(error, FileTooLargeError):
        return read_error(display, too_large_message(error))
    if isinstance(error, DecodeError):
        return read_error(display, str(error), error.row, error.column)
    reason = error.strerror if isinstance(error, OSError) and error.strerror else str(error)
    return read_error(display, f"cannot read stdin: {reason}")


def _read_stdin(display: str) -> tuple[str, Any]:
    """stdin's text, or a VL001 finding saying why there is none."""
    from viewlint.engine import DecodeError, decode_source

    try:
        return decode_source(_stdin_bytes()), None
    except (OSError, DecodeError) as error:
        return "", _stdin_problem(display, error)


def _emit(diagnostics: list, results: list, output_format: str, output_file: Optional[str], statistics: bool,
          *, unsafe_fixes: bool = False, to_stderr: bool = False, color: str = "auto") -> None:
    from viewlint.output import render
    from viewlint.registry import all_rules
    from viewlint.summary import statistics_text
    from viewlint.terminal import colour_enabled

    colour = False
    if statistics:
        text = statistics_text(diagnostics, output_format, unsafe_fixes)
    else:
        sources = {r.path: r.source for r in results if r.source is not None} if output_format == "full" else None
        # Colour only where a reader sees it: never in an output file.
        colour = not output_file and colour_enabled(color, sys.stderr if to_stderr else sys.stdout)
        text = render(output_format, diagnostics, rules=all_rules(), sources=sources, root=Path.cwd(), unsafe_fixes=unsafe_fixes,
                      colour=colour)
    if output_file:
        _write_output_file(output_file, text)
    elif text and to_stderr:
        click.echo(text, nl=False, err=True)
    elif text:
        from viewlint.console import write_stdout

        write_stdout(text, colour=colour)  # `| head` ends the output; the exit code stays that of the findings


def _write_output_file(output_file: str, text: str) -> None:
    """`-o FILE`: UTF-8; a file name that is not valid UTF-8 keeps its own bytes."""
    from viewlint.console import ERRORS

    Path(output_file).write_text(text, encoding="utf-8", errors=ERRORS)


# ---------------------------------------------------------------------------- --fix, --diff


def _hidden_fixes_note(diagnostics: Sequence[Any], unsafe_fixes: bool) -> None:
    """Ruff's hint that some findings have unsafe fixes that `--unsafe-fixes` would enable."""
    from viewlint.fix import is_hidden_unsafe

    hidden = sum(1 for d in diagnostics if is_hidden_unsafe(d, unsafe_fixes))
    if hidden:
        noun = "fix" if hidden == 1 else "fixes"
        click.echo(f"{hidden} hidden {noun} can be enabled with the `--unsafe-fixes` option.", err=True)


def _show_fixes(file_fixes: Sequence[Any], diff: bool) -> None:
    """`--show-fixes`: what was (or, with --diff, would be) fixed, per file and per rule, on stderr."""
    from viewlint.registry import all_rules

    rules = all_rules()
    total = sum(f.outcome.fixed_count for f in file_fixes)
    if not total:
        click.echo("No findings would be fixed." if diff else "No findings fixed.", err=True)
        return
    noun = "finding" if total == 1 else "findings"
    lines = [f"{'Would fix' if diff else 'Fixed'} {total} {noun}:"]
    for file_fix in file_fixes:
        lines.append(f"- {file_fix.path}:")
        for code, count in sorted(file_fix.outcome.fixed.items()):
            name = rules[code].name if code in rules else code
            lines.append(f"    {count:>3} × {code} ({name})")
    click.echo("\n".join(lines), err=True)


def _fix_files(files: Sequence[Any], results: list, jobs: int, *, diff: bool, unsafe_fixes: bool, output_format: str,
               output_file: Optional[str], statistics: bool, quiet: bool, exit_zero: bool, show_fixes: bool,
               exit_non_zero_on_fix: bool) -> int:
    """`--fix`/`--diff` on files: fix those with applicable fixes, write (or diff), report what remains."""
    from viewlint.engine import FileResult
    from viewlint.file_fixes import diff_of, fix_files, write_fix
    from viewlint.fix import FileChangedError, is_applicable

    wanted = [i for i, r in enumerate(results) if any(is_applicable(d, unsafe_fixes) for d in r.diagnostics)]
    # Several names for one file (symbolic or hard links) are fixed through the first name only;
    # the others are looked at again once it is written (fixing each from the old bytes would clash).
    identities = [_identity(source.path) for source in files]
    first_names: dict[tuple[int, int], int] = {}
    for i in wanted:
        if identities[i] is not None:
            first_names.setdefault(identities[i], i)
    primary = [i for i in wanted if identities[i] is None or first_names[identities[i]] == i]
    changed, errors, diff_text = [], [], []
    written: set[tuple[int, int]] = set()

    def settle(i: int, file_fix: Any, *, recheck: bool = False) -> None:
        outcome = file_fix.outcome
        if file_fix.error is not None or outcome is None:
            errors.append(file_fix.error or f"{file_fix.path}: not fixed")
            return
        for problem in outcome.problems:
            click.echo(f"viewlint: warning: {problem}", err=True)
        if not file_fix.changed:
            if recheck:  # another name of a rewritten file: its findings are those of the new bytes
                results[i] = FileResult(results[i].path, outcome.diagnostics, outcome.text)
            return
        if diff:
            diff_text.append(diff_of(file_fix))
        else:
            try:
                write_fix(file_fix, files[i].path)
            except FileChangedError as error:
                errors.append(str(error))
                return
            except OSError as error:
                errors.append(f"{file_fix.path}: cannot write the fixed file: {error.strerror or error}")
                return
            if identities[i] is not None:
                written.add(identities[i])
        results[i] = FileResult(results[i].path, outcome.diagnostics, outcome.text)
        changed.append(file_fix)

    for i, file_fix in zip(primary, fix_files([files[i] for i in primary], jobs, unsafe_fixes)):
        settle(i, file_fix)
    done = set(primary)
    for i, identity in enumerate(identities):
        if identity in written and i not in done:
            settle(i, fix_files([files[i]], 1, unsafe_fixes)[0], recheck=True)
    for error in errors:
        click.echo(f"viewlint: error: {error}", err=True)
    fixed = sum(f.outcome.fixed_count for f in changed)
    diagnostics = sorted((d for r in results for d in r.diagnostics), key=lambda d: d.sort_key)
    internal = any(d.is_internal_error for d in diagnostics)
    if diff:
        text = "".join(diff_text)
        if output_file:
            _write_output_file(output_file, text)
        elif text:
            click.echo(text, nl=False)
        if show_fixes:
            _show_fixes(changed, diff=True)
        if not quiet:
            noun = "finding" if fixed == 1 else "findings"
            click.echo(f"Would fix {fixed} {noun}." if fixed else "No findings would be fixed.", err=True)
            _hidden_fixes_note(diagnostics, unsafe_fixes)
        if errors or internal:
            return EXIT_ERROR
        return EXIT_FINDINGS if text and not exit_zero else EXIT_OK
    _emit(diagnostics, results, output_format, output_file, statistics, unsafe_fixes=unsafe_fixes)
    return _fix_summary(changed, diagnostics, errors, quiet=quiet, exit_zero=exit_zero, show_fixes=show_fixes,
                        exit_non_zero_on_fix=exit_non_zero_on_fix, unsafe_fixes=unsafe_fixes)


def _identity(path: Path) -> Optional[tuple[int, int]]:
    """The (device, inode) a path leads to, through symbolic links; None when it cannot be read."""
    try:
        status = os.stat(path)
    except OSError:
        return None
    return status.st_dev, status.st_ino


def _fix_summary(changed: Sequence[Any], remaining: Sequence[Any], errors: Sequence[str], *, quiet: bool, exit_zero: bool,
                 show_fixes: bool, exit_non_zero_on_fix: bool, unsafe_fixes: bool) -> int:
    """Ruff's summary after --fix (`Found N findings (M fixed, K remaining).`) and the exit code."""
    fixed = sum(f.outcome.fixed_count for f in changed)
    if show_fixes:
        _show_fixes(changed, diff=False)
    if not quiet:
        total = fixed + len(remaining)
        if total:
            noun = "finding" if total == 1 else "findings"
            click.echo(f"Found {total} {noun} ({fixed} fixed, {len(remaining)} remaining).", err=True)
            _hidden_fixes_note(remaining, unsafe_fixes)
        else:
            click.echo("All checks passed!", err=True)
    if errors or any(d.is_internal_error for d in remaining):
        return EXIT_ERROR
    if exit_zero:
        return EXIT_OK
    if remaining or (exit_non_zero_on_fix and fixed):
        return EXIT_FINDINGS
    return EXIT_OK


def _fix_stdin(display: str, settings: Any, *, diff: bool, unsafe_fixes: bool, output_format: str, output_file: Optional[str],
               statistics: bool, quiet: bool, exit_zero: bool, show_fixes: bool, exit_non_zero_on_fix: bool) -> int:
    """`--fix -`: the fixed source on stdout (the remaining findings on stderr); `--diff -`: the diff."""
    from viewlint.engine import FileResult
    from viewlint.file_fixes import diff_of, engine_lint, fix_source

    from viewlint.engine import MAX_FILE_BYTES, DecodeError, decode_source
    from viewlint.reading import FileTooLargeError

    data, buffer = b"", None
    try:
        buffer = _stdin_buffer()
        data = buffer.read(MAX_FILE_BYTES + 1)
        if len(data) > MAX_FILE_BYTES:
            raise FileTooLargeError("<stdin>", MAX_FILE_BYTES)
        decode_source(data)
    except (OSError, DecodeError) as error:
        # Not Python text we can fix: give the input back untouched and report it like a file (VL001).
        if not diff:
            stdout = click.get_binary_stream("stdout")
            stdout.write(data)
            if isinstance(error, FileTooLargeError) and buffer is not None:
                shutil.copyfileobj(buffer, stdout)  # the rest, streamed: memory stays bounded
            stdout.flush()
        problem = _stdin_problem(display, error)
        _emit([problem], [FileResult(display, [problem], None)], output_format, output_file, statistics,
              unsafe_fixes=unsafe_fixes, to_stderr=True)
        return _fix_summary([], [problem], [], quiet=quiet, exit_zero=exit_zero, show_fixes=show_fixes,
                            exit_non_zero_on_fix=exit_non_zero_on_fix, unsafe_fixes=unsafe_fixes)
    file_fix = fix_source(data, engine_lint(settings), display, unsafe_fixes=unsafe_fixes)
    outcome = file_fix.outcome
    if file_fix.error is not None or outcome is None:
        if not diff:
            click.get_binary_stream("stdout").write(data)  # an editor piping through us must not lose the text
        raise _fail(file_fix.error or f"{display}: not fixed")
    for problem in outcome.problems:
        click.echo(f"viewlint: warning: {problem}", err=True)
    changed = [file_fix] if file_fix.changed else []
    if diff:
        text = diff_of(file_fix)
        if text:
            click.echo(text, nl=False)
        if show_fixes:
            _show_fixes(changed, diff=True)
        fixed = outcome.fixed_count if changed else 0
        if not quiet:
            noun = "finding" if fixed == 1 else "findings"
            click.echo(f"Would fix {fixed} {noun}." if fixed else "No findings would be fixed.", err=True)
        if any(d.is_internal_error for d in outcome.diagnostics):
            return EXIT_ERROR
        return EXIT_FINDINGS if text and not exit_zero else EXIT_OK
    stdout = click.get_binary_stream("stdout")
    stdout.write(file_fix.fixed)
    stdout.flush()
    remaining = outcome.diagnostics
    result = FileResult(display, remaining, outcome.text)
    _emit(remaining, [result], output_format, output_file, statistics, unsafe_fixes=unsafe_fixes, to_stderr=True)
    return _fix_summary(changed, remaining, [], quiet=quiet, exit_zero=exit_zero, show_fixes=show_fixes,
                        exit_non_zero_on_fix=exit_non_zero_on_fix, unsafe_fixes=unsafe_fixes)


def _add_noqa(results: list, quiet: bool) -> int:
    from viewlint.file_fixes import FixError, add_noqa_to_notebook, add_noqa_to_source
    from viewlint.fix import FileChangedError
    from viewlint.notebook import NotebookError, is_notebook

    total = 0
    for result in results:
        add = add_noqa_to_notebook if is_notebook(result.path) else add_noqa_to_source
        try:
            total += add(result)
        except (FixError, NotebookError, FileChangedError, OSError) as error:
            click.echo(f"{result.path}: noqa directives not added: {error}", err=True)
    if not quiet:
        click.echo(f"Added {total} noqa directive{'s' if total != 1 else ''}.", err=True)
    return EXIT_OK


@main.command("rule")
@click.argument("code", required=False)
@click.option("--all", "show_all", is_flag=True, help="List every code: the reserved VL000-VL002, then the rules.")
@click.option("--output-format", type=click.Choice(["text", "json"]), default="text")
def rule_command(code: Optional[str], show_all: bool, output_format: str) -> None:
    """Show a rule's documentation (`viewlint rule VL201`) or list them all (`--all`)."""
    from viewlint.console import write_stdout
    from viewlint.diagnostics import RESERVED_CODES
    from viewlint.registry import all_rules
    from viewlint.reserved import RESERVED_DOCUMENTATION, RESERVED_SUMMARIES

    def reserved_metadata(reserved: str) -> dict[str, Any]:
        return {"code": reserved, "name": RESERVED_CODES[reserved], "summary": RESERVED_SUMMARIES[reserved],
                "default_enabled": True, "fix": "none", "options": {}}

    rules = all_rules()
    if show_all or code is None:
        # Every code a run can report: the reserved ones (always on, never fixable) and the rules.
        rows = [reserved_metadata(reserved) for reserved in sorted(RESERVED_CODES)]
        rows += [rule.metadata() for rule in rules.values()]
        if output_format == "json":
            write_stdout(json.dumps(rows, indent=2) + "\n")
        else:
            write_stdout("".join(f"{row['code']}  {'on ' if row['default_enabled'] else 'off'}  fix:{row['fix']:<7} "
                                 f"{row['name']}: {row['summary']}\n" for row in rows))
        return

    upper = code.upper()
    if upper in RESERVED_CODES:
        documentation = RESERVED_DOCUMENTATION[upper]
        if output_format == "json":
            click.echo(json.dumps({**reserved_metadata(upper), "explanation": documentation}, indent=2))
        else:
            click.echo(documentation, nl=False)
        return
    rule = rules.get(upper)
    if rule is None:
        raise _fail(f"unknown rule code {code!r} (see `viewlint rule --all`)")
    if output_format == "json":
        click.echo(json.dumps({**rule.metadata(), "explanation": rule.documentation()}, indent=2))
    else:
        click.echo(rule.documentation(), nl=False)


@main.command("beliefs")
@click.argument("paths", nargs=-1, type=click.Path(readable=False))
def beliefs_command(paths: tuple[str, ...]) -> None:
    """Print, as JSON lines, what the analysis believes of each binding in PATHS (`.py` files or folders):
    {"path", "line", "target", "tensor", "view", "base", "device", "contiguous", "why"}."""
    from viewlint.beliefs import beliefs_of_text, package_relative

    files: list[str] = []
    for path in paths or (".",):
        if os.path.isdir(path):
            for folder, dirs, names in os.walk(path):
                dirs[:] = sorted(d for d in dirs if not d.startswith(".") and d != "__pycache__")
                files.extend(os.path.join(folder, n) for n in sorted(names) if n.endswith(".py"))
        elif os.path.exists(path):
            files.append(path)
        else:
            raise _fail(f"{path}: no such file or folder")
    for path in files:
        try:
            with open(path, encoding="utf-8") as handle:
                text = handle.read()
        except (OSError, UnicodeDecodeError) as error:
            click.echo(f"viewlint: {path}: {error}", err=True)
            continue
        display = package_relative(path)
        for record in beliefs_of_text(text, display, source_path=path):
            click.echo(json.dumps(record))


@main.command("server")
def server_command() -> None:
    """Run the language server on stdin/stdout, for editors (needs `pip install "viewlint[server]"`)."""
    try:
        from viewlint.server import serve
    except ImportError as error:
        raise _fail(f"the language server needs pygls ({error}): install viewlint's `server` extra, or pip install \"pygls>=2,<3\"")
    serve()


@main.command("verify")
@click.argument("paths", nargs=-1, type=click.Path(readable=False))
@click.option("--run", "command", required=True, metavar="CMD", help='The command that exercises PATHS, run through the shell in the current folder: "pytest tests/", "python train.py", "python -m pkg.serve".')
@click.option("--timeout", type=click.FloatRange(min=0, min_open=True), default=1800.0, show_default=True, metavar="SECONDS", help="Stop the command after this long.")
@click.option("--device", type=click.Choice(["auto", "cpu", "cuda"]), default="auto", show_default=True, help="cuda: allocate on the GPU and count syncs; cpu: hide GPUs from the command; auto: leave the command's devices alone.")
@click.option("--select", multiple=True, metavar="CODES", help="Rules to enable (codes, prefixes, ALL); replaces the configured set.")
@click.option("--extend-select", multiple=True, metavar="CODES", help="Rules to enable in addition to the configured set.")
@click.option("--ignore", multiple=True, metavar="CODES", help="Rules to disable.")
@click.option("--output-format", type=click.Choice(["concise", "full", "json", "json-lines", "sarif", "github", "pylint", "junit"]), default=None, help="How findings are printed (default: concise).")
@click.option("-o", "--output-file", type=click.Path(dir_okay=False, writable=True), help="Write findings to this file instead of stdout.")
@click.option("--exit-zero", is_flag=True, help="Exit 0 even when there are findings.")
@click.option("-q", "--quiet", is_flag=True, help="Print findings only, no summary.")
@click.option("--config", "config_path", type=click.Path(dir_okay=False), default=None, help="Use this pyproject.toml or viewlint.toml for every file.")
@click.option("--isolated", is_flag=True, help="Ignore all configuration files.")
@click.option("--no-cache", is_flag=True, hidden=True, help="Accepted for compatibility: verify never uses the result cache.")
@click.option("--root", "verify_roots", multiple=True, type=click.Path(file_okay=False), metavar="DIR", help="The folder your packages import from, added at the end of the command's PYTHONPATH (default: found from the layout).")
def verify_command(paths: tuple[str, ...], command: str, timeout: float, **options: Any) -> None:
    """Lint PATHS, run CMD with a hook that instruments the flagged files, report verdicts.

    The flagged files are instrumented however CMD runs them: imported (pytest, a worker),
    `python -m package.module`, or `python path/to/file.py`. Findings the command never reached
    are reported as `not reached`; the command's own output goes to stderr.

    Exit status: CMD's own when it fails (128+N when signal N killed it, 124 when it ran past
    --timeout); otherwise 0 when every finding was refuted (or --exit-zero), 1 when findings
    remain, 2 for a usage, configuration or internal error.
    """
    options["no_cache"] = True  # verify writes nothing into the project: no .viewlint_cache either
    code = run_check(paths, verify_run=command, verify_timeout=timeout, **options)
    failed = click.get_current_context().meta.get(_COMMAND_STATUS)
    sys.exit(failed if failed is not None else code)
