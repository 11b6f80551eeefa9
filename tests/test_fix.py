"""`--fix`, `--diff`, `--unsafe-fixes`: before/after fixture pairs, file fidelity, and fixes that really fix.

A pair is `fixtures/<CODE>/<name>.py` and `fixtures/<CODE>/<name>.py.fixed`: the bytes
`viewlint --isolated --select ALL --fix` leaves in a copy of the `.py` (plus
`--unsafe-fixes` when rule CODE's fix is unsafe).
"""

from __future__ import annotations

import json
import os
import shutil
import stat
import subprocess
import sys
from collections import Counter
from pathlib import Path

import libcst as cst
import pytest

from conftest import FIXTURES, ROOT, run_viewlint

from viewlint.diagnostics import Applicability, Diagnostic, Edit, Fix, Location
from viewlint.file_fixes import fix_source
from viewlint.fix import (
    MAX_PASSES,
    LineIndex,
    apply_pass,
    fix_text,
    is_applicable,
    unified_diff,
)
from viewlint.registry import all_rules
from viewlint.settings import Settings

PAIRS = sorted(FIXTURES.glob("VL*/*.py.fixed"))
PAIR_IDS = [str(p.relative_to(FIXTURES)) for p in PAIRS]

SNIPPET = "import torch\n\nbuf = torch.zeros(8, 4)\nbuf[[3]].fill_(2.0)\nassert float(buf[3].sum()) == 8.0\n"
SNIPPET_FIXED = "import torch\n\nbuf = torch.zeros(8, 4)\nbuf[[3]] = 2.0\nassert float(buf[3].sum()) == 8.0\n"
# A VL201 finding with a hint but no edit: it remains after --fix.
UNFIXABLE = "torch.nn.init.zeros_(buf[[5]])\n"


def _unsafe(code: str) -> bool:
    rule = all_rules().get(code)
    return rule is not None and rule.fix_applicability is Applicability.UNSAFE


def _fix_args(code: str) -> list[str]:
    return ["--isolated", "--no-cache", "--select", "ALL", "--fix", *(["--unsafe-fixes"] if _unsafe(code) else [])]


def _fix_copy(pair: Path, tmp_path: Path) -> tuple[Path, subprocess.CompletedProcess]:
    """Copy the pair's `.py` into tmp_path and run the real CLI's --fix on it."""
    before = pair.with_suffix("")  # name.py.fixed -> name.py
    target = tmp_path / before.name
    shutil.copyfile(before, target)
    result = run_viewlint(*_fix_args(pair.parent.name), target.name, cwd=tmp_path)
    return target, result


def _lint(text: str, select: tuple[str, ...] = ("ALL",)):
    from viewlint.file_fixes import engine_lint

    return engine_lint(Settings(select=select))


# ---------------------------------------------------------------------------- fixture pairs


@pytest.mark.parametrize("pair", PAIRS, ids=PAIR_IDS)
def test_fixed_fixture_matches_byte_for_byte(pair, tmp_path):
    target, result = _fix_copy(pair, tmp_path)
    assert result.returncode in (0, 1), result.stderr
    if os.environ.get("VIEWLINT_UPDATE_FIXED"):  # regenerate after changing a fixture; review the diff
        shutil.copyfile(target, pair)
    assert target.read_bytes() == pair.read_bytes(), result.stdout + result.stderr
    assert target.read_bytes() != pair.with_suffix("").read_bytes(), "a pair must show a fix"


@pytest.mark.parametrize("pair", PAIRS, ids=PAIR_IDS)
def test_second_fix_changes_nothing(pair, tmp_path):
    target = tmp_path / pair.with_suffix("").name
    shutil.copyfile(pair, target)
    result = run_viewlint(*_fix_args(pair.parent.name), target.name, cwd=tmp_path)
    assert result.returncode in (0, 1), result.stderr
    assert target.read_bytes() == pair.read_bytes()
    assert "(0 fixed," in result.stderr or "All checks passed!" in result.stderr


@pytest.mark.parametrize("pair", PAIRS, ids=PAIR_IDS)
def test_fixed_fixture_parses(pair):
    text = pair.read_text(encoding="utf-8")
    compile(text, str(pair), "exec", dont_inherit=True)
    assert cst.parse_module(text).code == text


def test_every_rule_with_fixes_in_its_fixtures_has_a_pair():
    """A rule whose fixtures get edits from --fix must show them in at least one before/after pair."""
    missing = []
    for code in sorted(all_rules()):
        unsafe = _unsafe(code)
        settings = Settings(select=("ALL",))
        from viewlint.engine import lint_path

        fixable = [
            f for f in sorted((FIXTURES / code).glob("*.py"))
            if any(d.code == code and is_applicable(d, unsafe) for d in lint_path(f, str(f), settings).diagnostics)
        ]
        if fixable and not list((FIXTURES / code).glob("*.py.fixed")):
            missing.append(code)
    assert not missing, f"rules with fixes but no fixtures/<CODE>/*.py.fixed pair: {missing}"


# ---------------------------------------------------------------------------- fixes change behaviour


def test_fixed_snippet_writes_into_the_buffer(tmp_path):
    """`buf[[3]].fill_(2.0)` lost the write; the fixed `buf[[3]] = 2.0` lands it (real torch)."""
    pytest.importorskip("torch")
    path = tmp_path / "snippet.py"
    path.write_text(SNIPPET, encoding="utf-8")
    before = subprocess.run([sys.executable, "-c", f"import runpy; runpy.run_path({str(path)!r})"], capture_output=True, text=True)
    assert before.returncode != 0 and "AssertionError" in before.stderr  # the write was lost
    result = run_viewlint("--isolated", "--no-cache", "--fix", "--unsafe-fixes", path.name, cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert path.read_text(encoding="utf-8") == SNIPPET_FIXED
    after = subprocess.run([sys.executable, "-c", f"import runpy; runpy.run_path({str(path)!r})"], capture_output=True, text=True)
    assert after.returncode == 0, after.stderr


def test_fixed_vl201_fixture_writes_land_in_the_buffer():
    """The fixed VL201 fixture's functions now change the buffer they were meant to change."""
    pytest.importorskip("torch")
    fixed = FIXTURES / "VL201" / "positive_inplace_on_gather.py.fixed"
    script = (
        "import runpy, sys, torch\n"
        "ns = runpy.run_path(sys.argv[1], run_name='viewlint_fixed')\n"
        "buf = ns['bump']()\n"
        "assert buf[3].tolist() == [2.0] * 4, buf\n"  # buf[[3]] = 2.0
        "assert buf[1].tolist() == buf[2].tolist() == [1.0] * 4, buf\n"  # buf[idx] += ones
        "assert float(buf[5].sum()) == 0.0\n"  # `tmp.add_` has no edit: still lost, still reported
        "b = torch.zeros(4, 2)\n"
        "ns['write_rows'](b, [1, 2], torch.ones(2, 2))\n"
        "assert float(b.sum()) == 4.0\n"
        "c = torch.rand(4, 4) + 1.0\n"
        "ns['scatter_mask'](c)\n"
        "assert float(c.sum()) == 0.0\n"  # buf[mask] = 0 zeroes every element > 0.5
    )
    result = subprocess.run([sys.executable, "-c", script, str(fixed)], cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stderr


def test_fixed_vl101_fixture_cached_entries_own_their_storage():
    """After the (unsafe) VL101 fix, every cached or registered tensor owns exactly its payload's bytes."""
    pytest.importorskip("torch")
    fixed = FIXTURES / "VL101" / "positive_slices_in_long_lived_places.py.fixed"
    script = (
        "import runpy, sys, torch\n"
        "ns = runpy.run_path(sys.argv[1], run_name='viewlint_fixed')\n"
        "def owns(t):\n"
        "    return t.untyped_storage().nbytes() == t.numel() * t.element_size()\n"
        "recorder = ns['ActivationRecorder']()\n"
        "x, h = torch.randn(64, 32), torch.randn(4, 64, 32)\n"
        "recorder.record(0, x, h)\n"
        "assert owns(recorder.cache[0]) and recorder.cache[0].untyped_storage().nbytes() == 64 * 4\n"
        "assert all(owns(t) for t in recorder.saved)\n"
        "assert all(t.untyped_storage().data_ptr() != h.untyped_storage().data_ptr() for t in recorder.saved)\n"
        "ns['register']('w', torch.randn(100, 10))\n"
        "assert owns(ns['_REGISTRY']['w'])\n"
        "assert owns(ns['rope_table'](8)) and ns['rope_table'](8).untyped_storage().nbytes() == 8 * 64 * 4\n"
    )
    result = subprocess.run([sys.executable, "-c", script, str(fixed)], cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stderr


# ---------------------------------------------------------------------------- file fidelity


def _fix_file(tmp_path: Path, name: str, data: bytes, *extra: str) -> tuple[bytes, subprocess.CompletedProcess]:
    path = tmp_path / name
    path.write_bytes(data)
    result = run_viewlint("--isolated", "--no-cache", "--fix", "--unsafe-fixes", *extra, name, cwd=tmp_path)
    return path.read_bytes(), result


def test_crlf_file_stays_crlf(tmp_path):
    source = (
        "import torch\r\n"
        "buf = torch.zeros(8, 4)\r\n"
        "buf[[3]].fill_(2.0)  # one\r\n"
        "buf[[1, 2]].copy_(torch.tensor(\r\n"
        "    [[1.0] * 4, [2.0] * 4]))\r\n"
    )
    fixed, result = _fix_file(tmp_path, "crlf.py", source.encode())
    assert result.returncode == 0, result.stderr
    assert fixed == (
        "import torch\r\n"
        "buf = torch.zeros(8, 4)\r\n"
        "buf[[3]] = 2.0  # one\r\n"
        "buf[[1, 2]] = torch.tensor(\r\n"
        "    [[1.0] * 4, [2.0] * 4])\r\n"
    ).encode()
    assert b"\n" not in fixed.replace(b"\r\n", b"")


def test_cr_only_file_keeps_its_line_endings(tmp_path):
    source = "import torch\rbuf = torch.zeros(8, 4)\rbuf[[3]].zero_()\rx = 1\r"
    fixed, result = _fix_file(tmp_path, "cr.py", source.encode())
    assert result.returncode == 0, result.stderr
    assert fixed == b"import torch\rbuf = torch.zeros(8, 4)\rbuf[[3]] = 0\rx = 1\r"


def test_bom_is_kept(tmp_path):
    source = "import torch\nbuf = torch.zeros(8, 4)\nbuf[[3]].fill_(2.0)  # é\n"
    fixed, result = _fix_file(tmp_path, "bom.py", b"\xef\xbb\xbf" + source.encode("utf-8"))
    assert result.returncode == 0, result.stderr
    assert fixed == b"\xef\xbb\xbf" + source.replace("buf[[3]].fill_(2.0)", "buf[[3]] = 2.0").encode("utf-8")


def test_latin1_file_is_re_encoded_with_its_cookie(tmp_path):
    source = "# -*- coding: latin-1 -*-\nimport torch\nname = 'café'\nbuf = torch.zeros(8, 4)\nbuf[[3]].fill_(2.0)  # ß\n"
    data = source.encode("latin-1")
    fixed, result = _fix_file(tmp_path, "latin.py", data)
    assert result.returncode == 0, result.stderr
    assert fixed == source.replace("buf[[3]].fill_(2.0)", "buf[[3]] = 2.0").encode("latin-1")
    assert b"caf\xe9" in fixed and b"\xc3" not in fixed


def test_file_mode_is_kept(tmp_path):
    path = tmp_path / "script.py"
    path.write_text(SNIPPET, encoding="utf-8")
    path.chmod(0o755)
    result = run_viewlint("--isolated", "--no-cache", "--fix", "--unsafe-fixes", "script.py", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert path.read_text(encoding="utf-8") == SNIPPET_FIXED
    assert stat.S_IMODE(path.stat().st_mode) == 0o755
    assert [p.name for p in tmp_path.iterdir()] == ["script.py"]  # no temporary file left behind


def test_symbolic_link_is_fixed_through_not_replaced(tmp_path):
    real = tmp_path / "real.py"
    real.write_text(SNIPPET, encoding="utf-8")
    link = tmp_path / "link.py"
    link.symlink_to(real.name)
    result = run_viewlint("--isolated", "--no-cache", "--fix", "--unsafe-fixes", "link.py", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert link.is_symlink()
    assert real.read_text(encoding="utf-8") == SNIPPET_FIXED


def test_file_changed_on_disk_is_not_overwritten(tmp_path, monkeypatch, capsys):
    """Someone saves the file while viewlint computes fixes: their bytes win, viewlint exits 2."""
    import viewlint.file_fixes as fix_module
    from viewlint.cli import run_check

    path = tmp_path / "busy.py"
    path.write_text(SNIPPET, encoding="utf-8")
    edited_meanwhile = SNIPPET + "# saved by the editor\n"
    original_fix_files = fix_module.fix_files

    def fix_then_edit(files, jobs, unsafe_fixes):
        fixes = original_fix_files(files, jobs, unsafe_fixes)
        path.write_text(edited_meanwhile, encoding="utf-8")
        return fixes

    monkeypatch.setattr(fix_module, "fix_files", fix_then_edit)
    monkeypatch.chdir(tmp_path)
    code = run_check(("busy.py",), fix=True, unsafe_fixes=True, isolated=True, no_cache=True, jobs=1)
    assert code == 2
    assert path.read_text(encoding="utf-8") == edited_meanwhile
    assert "changed on disk since it was read; not overwritten" in capsys.readouterr().err


def test_unparsable_file_is_left_alone(tmp_path):
    data = b"import torch\nbuf = torch.zeros(8, 4)\nbuf[[3]].fill_(2.0\n"
    fixed, result = _fix_file(tmp_path, "broken.py", data)
    assert fixed == data
    assert result.returncode == 1 and "VL000" in result.stdout


# ---------------------------------------------------------------------------- command line


def test_diff_prints_a_unified_diff_and_writes_nothing(tmp_path):
    path = tmp_path / "a.py"
    path.write_text(SNIPPET, encoding="utf-8")
    result = run_viewlint("--isolated", "--no-cache", "--diff", "--unsafe-fixes", "a.py", cwd=tmp_path)
    assert result.returncode == 1, result.stderr
    assert result.stdout == (
        "--- a.py\n+++ a.py\n@@ -1,5 +1,5 @@\n import torch\n \n buf = torch.zeros(8, 4)\n"
        "-buf[[3]].fill_(2.0)\n+buf[[3]] = 2.0\n assert float(buf[3].sum()) == 8.0\n"
    )
    assert "Would fix 1 finding." in result.stderr
    assert path.read_text(encoding="utf-8") == SNIPPET


def test_diff_on_a_clean_file_exits_0(tmp_path):
    (tmp_path / "clean.py").write_text(SNIPPET_FIXED, encoding="utf-8")
    result = run_viewlint("--isolated", "--no-cache", "--diff", "clean.py", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert result.stdout == ""


def test_diff_of_the_applied_fix_applies_with_patch(tmp_path):
    """The --diff output is a real patch: `patch` turns the file into what --fix writes."""
    if shutil.which("patch") is None:
        pytest.skip("no patch(1)")
    source = (FIXTURES / "VL201" / "positive_inplace_on_gather.py").read_bytes()
    (tmp_path / "a.py").write_bytes(source)
    diff = run_viewlint("--isolated", "--no-cache", "--select", "ALL", "--diff", "--unsafe-fixes", "a.py", cwd=tmp_path).stdout
    subprocess.run(["patch", "-p0", "-s"], input=diff, text=True, cwd=tmp_path, check=True)
    assert (tmp_path / "a.py").read_bytes() == (FIXTURES / "VL201" / "positive_inplace_on_gather.py.fixed").read_bytes()


def test_fix_on_stdin_prints_the_fixed_source(tmp_path):
    result = run_viewlint("--isolated", "--fix", "--unsafe-fixes", "-", input=SNIPPET, cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert result.stdout == SNIPPET_FIXED
    assert "Found 1 finding (1 fixed, 0 remaining)." in result.stderr


def test_fix_on_stdin_reports_remaining_findings_on_stderr(tmp_path):
    source = SNIPPET + UNFIXABLE
    result = run_viewlint("--isolated", "--fix", "--unsafe-fixes", "--stdin-filename", "mod.py", "-", input=source, cwd=tmp_path)
    assert result.returncode == 1
    assert result.stdout == SNIPPET_FIXED + UNFIXABLE
    assert "mod.py:6:1: VL201" in result.stderr
    assert "Found 2 findings (1 fixed, 1 remaining)." in result.stderr


def test_diff_on_stdin(tmp_path):
    result = run_viewlint("--isolated", "--diff", "--unsafe-fixes", "-", input=SNIPPET, cwd=tmp_path)
    assert result.returncode == 1
    assert "-buf[[3]].fill_(2.0)\n+buf[[3]] = 2.0\n" in result.stdout


def test_show_fixes_lists_fixes_per_file_and_rule(tmp_path):
    (tmp_path / "a.py").write_text(SNIPPET, encoding="utf-8")
    (tmp_path / "b.py").write_text(SNIPPET + "buf[[1, 2]].zero_()\n", encoding="utf-8")
    result = run_viewlint("--isolated", "--no-cache", "--fix", "--unsafe-fixes", "--show-fixes", "a.py", "b.py", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert (
        "Fixed 3 findings:\n"
        "- a.py:\n"
        "      1 × VL201 (inplace-on-advanced-index)\n"
        "- b.py:\n"
        "      2 × VL201 (inplace-on-advanced-index)\n"
    ) in result.stderr
    assert "Found 3 findings (3 fixed, 0 remaining)." in result.stderr


def test_fix_exit_codes(tmp_path):
    (tmp_path / "a.py").write_text(SNIPPET, encoding="utf-8")
    assert run_viewlint("--isolated", "--no-cache", "--fix", "--unsafe-fixes", "a.py", cwd=tmp_path).returncode == 0
    (tmp_path / "a.py").write_text(SNIPPET, encoding="utf-8")
    result = run_viewlint("--isolated", "--no-cache", "--fix", "--unsafe-fixes", "--exit-non-zero-on-fix", "a.py", cwd=tmp_path)
    assert result.returncode == 1
    # Nothing left to fix: --exit-non-zero-on-fix exits 0 again.
    result = run_viewlint("--isolated", "--no-cache", "--fix", "--unsafe-fixes", "--exit-non-zero-on-fix", "a.py", cwd=tmp_path)
    assert result.returncode == 0 and "All checks passed!" in result.stderr
    # Findings without an edit remain: exit 1.
    (tmp_path / "b.py").write_text(SNIPPET + UNFIXABLE, encoding="utf-8")
    result = run_viewlint("--isolated", "--no-cache", "--fix", "--unsafe-fixes", "b.py", cwd=tmp_path)
    assert result.returncode == 1
    assert "Found 2 findings (1 fixed, 1 remaining)." in result.stderr
    assert result.stdout.startswith("b.py:6:1: VL201 ")


def test_fix_uses_the_cache_but_still_fixes(tmp_path):
    (tmp_path / "a.py").write_text(SNIPPET, encoding="utf-8")
    assert run_viewlint("--isolated", "a.py", cwd=tmp_path).returncode == 1  # fills the cache
    result = run_viewlint("--isolated", "--fix", "--unsafe-fixes", "a.py", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert (tmp_path / "a.py").read_text(encoding="utf-8") == SNIPPET_FIXED


def test_fix_in_parallel_matches_serial(tmp_path):
    for i in range(6):
        (tmp_path / f"m{i}.py").write_text(SNIPPET * (i + 1), encoding="utf-8")
    result = run_viewlint("--isolated", "--no-cache", "-j", "3", "--fix", "--unsafe-fixes", ".", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    for i in range(6):
        assert (tmp_path / f"m{i}.py").read_text(encoding="utf-8") == SNIPPET_FIXED * (i + 1)
    assert "Found 21 findings (21 fixed, 0 remaining)." in result.stderr


def test_add_noqa_with_fix_is_a_usage_error(tmp_path):
    (tmp_path / "a.py").write_text(SNIPPET, encoding="utf-8")
    result = run_viewlint("--isolated", "--fix", "--add-noqa", "a.py", cwd=tmp_path)
    assert result.returncode == 2
    assert (tmp_path / "a.py").read_text(encoding="utf-8") == SNIPPET


def test_noqa_suppressed_findings_are_not_fixed(tmp_path):
    source = SNIPPET.replace("fill_(2.0)", "fill_(2.0)  # noqa: VL201")
    fixed, result = _fix_file(tmp_path, "a.py", source.encode())
    assert fixed == source.encode() and result.returncode == 0


def test_unsafe_fixes_only_with_unsafe_fixes(tmp_path, monkeypatch, capsys):
    """An unsafe fix is shown as available, applied by --fix --unsafe-fixes, never by --fix alone."""
    from viewlint.cli import run_check

    assert all_rules()["VL201"].fix_applicability is Applicability.UNSAFE  # the write starts landing
    monkeypatch.chdir(tmp_path)
    path = tmp_path / "a.py"
    path.write_text(SNIPPET, encoding="utf-8")
    options = dict(isolated=True, no_cache=True, jobs=1, select=("VL201",))

    assert run_check(("a.py",), **options) == 1
    out = capsys.readouterr()
    assert "VL201 [*]" not in out.out and "(0 fixable)" in out.err
    assert "1 hidden fix can be enabled with the `--unsafe-fixes` option." in out.err
    assert run_check(("a.py",), unsafe_fixes=True, **options) == 1
    out = capsys.readouterr()
    assert "a.py:4:1: VL201 [*] " in out.out and "(1 fixable)" in out.err

    assert run_check(("a.py",), fix=True, **options) == 1
    assert path.read_text(encoding="utf-8") == SNIPPET
    assert "Found 1 finding (0 fixed, 1 remaining)." in capsys.readouterr().err
    assert run_check(("a.py",), fix=True, unsafe_fixes=True, **options) == 0
    assert path.read_text(encoding="utf-8") == SNIPPET_FIXED


# ---------------------------------------------------------------------------- fixes in JSON and SARIF


def test_json_output_carries_the_fix(tmp_path):
    (tmp_path / "a.py").write_text(SNIPPET, encoding="utf-8")
    result = run_viewlint("--isolated", "--no-cache", "--output-format", "json", "a.py", cwd=tmp_path)
    [finding] = json.loads(result.stdout)
    assert finding["fix"]["applicability"] == "unsafe"
    assert finding["fix"]["edits"] == [
        {"content": "buf[[3]] = 2.0", "location": {"row": 4, "column": 1}, "end_location": {"row": 4, "column": 20}}
    ]


def test_sarif_output_carries_the_fix(tmp_path):
    (tmp_path / "a.py").write_text(SNIPPET, encoding="utf-8")
    result = run_viewlint("--isolated", "--no-cache", "--output-format", "sarif", "a.py", cwd=tmp_path)
    [finding] = json.loads(result.stdout)["runs"][0]["results"]
    [fix] = finding["fixes"]
    assert fix["properties"]["applicability"] == "unsafe"
    [change] = fix["artifactChanges"]
    assert change["artifactLocation"]["uri"] == "a.py"
    [replacement] = change["replacements"]
    assert replacement["insertedContent"]["text"] == "buf[[3]] = 2.0"
    assert replacement["deletedRegion"]["startLine"] == 4
    assert replacement["deletedRegion"]["startColumn"] == 1
    assert replacement["deletedRegion"]["endColumn"] == 20


# ---------------------------------------------------------------------------- the machinery


def _diagnostic(code: str, edits: list[tuple[str, tuple[int, int], tuple[int, int]]],
                applicability: Applicability = Applicability.SAFE) -> Diagnostic:
    fix_edits = tuple(Edit(content, Location(*start), Location(*end)) for content, start, end in edits)
    start = fix_edits[0].start if fix_edits else Location(1, 1)
    return Diagnostic("t.py", code, "test", "msg", start, start, fix=Fix(applicability, "fix it", fix_edits))


def test_line_index_counts_characters_and_all_line_endings():
    text = "é = 1\r\nb = 2\rc = 3\nd\x0ce = 4"
    index = LineIndex(text)
    assert text[index.offset(Location(1, 5))] == "1"
    assert text[index.offset(Location(2, 1))] == "b"
    assert text[index.offset(Location(3, 1))] == "c"
    assert text[index.offset(Location(4, 3))] == "e"  # a form feed does not end a line
    with pytest.raises(ValueError):
        index.offset(Location(1, 9))
    with pytest.raises(ValueError):
        index.offset(Location(6, 1))


def test_overlapping_fixes_are_deferred_not_merged():
    text = "aaaa\n"
    first = _diagnostic("VL901", [("bb", (1, 1), (1, 3))])
    overlapping = _diagnostic("VL902", [("cc", (1, 2), (1, 4))])
    adjacent = _diagnostic("VL903", [("d", (1, 3), (1, 4))])
    step = apply_pass(text, [overlapping, adjacent, first])
    assert step.text == "bbda\n"
    assert [d.code for d in step.applied] == ["VL901", "VL903"]
    assert [d.code for d in step.deferred] == ["VL902"]


def test_identical_fixes_are_applied_once():
    one = _diagnostic("VL901", [("x", (1, 1), (1, 2))])
    same = _diagnostic("VL902", [("x", (1, 1), (1, 2))])
    step = apply_pass("a = 1\n", [one, same])
    assert step.text == "x = 1\n" and len(step.applied) == 2


def test_deferred_fixes_are_applied_in_a_later_pass():
    """A fake linter proposing two overlapping fixes: the re-lint applies the second one next pass."""

    def lint(text: str, display: str) -> list[Diagnostic]:
        found = []
        if "old_a" in text:
            found.append(_diagnostic("VL901", [("new_a", (1, 1), (1, 6))]))
        if text.startswith(("old_a.old_b", "new_a.old_b")):
            found.append(_diagnostic("VL902", [("new_a.new_b", (1, 1), (1, 12))]))
        return found

    outcome = fix_text("old_a.old_b\n", lint, "t.py")
    assert outcome.text == "new_a.new_b\n"
    assert outcome.fixed == Counter({"VL901": 1, "VL902": 1})
    assert outcome.passes == 2 and outcome.converged and outcome.diagnostics == []


def test_a_fix_that_breaks_the_syntax_is_refused():
    def lint(text: str, display: str) -> list[Diagnostic]:
        return [_diagnostic("VL901", [("x = (", (1, 1), (1, 6))])] if text.startswith("x = 1") else []

    outcome = fix_text("x = 1\n", lint, "t.py")
    assert outcome.text == "x = 1\n" and not outcome.fixed
    assert any("invalid Python" in p for p in outcome.problems)


def test_fixes_that_never_converge_stop_after_the_bound():
    def lint(text: str, display: str) -> list[Diagnostic]:
        return [_diagnostic("VL901", [("x", (1, 1), (1, 1))])]  # always inserts one more "x"

    outcome = fix_text("x = 1\n", lint, "t.py")
    assert outcome.text == "x" * MAX_PASSES + "x = 1\n"
    assert not outcome.converged and outcome.passes == MAX_PASSES


def test_unsafe_and_display_only_fixes():
    safe = _diagnostic("VL901", [("y", (1, 1), (1, 2))])
    unsafe = _diagnostic("VL902", [("y", (1, 1), (1, 2))], Applicability.UNSAFE)
    display = Diagnostic("t.py", "VL903", "t", "m", Location(1, 1), Location(1, 1), fix=Fix(Applicability.DISPLAY_ONLY, "hint", ()))
    assert is_applicable(safe, False) and is_applicable(safe, True)
    assert not is_applicable(unsafe, False) and is_applicable(unsafe, True)
    assert not is_applicable(display, False) and not is_applicable(display, True)


def test_edit_content_newlines_follow_the_file():
    def lint(text: str, display: str) -> list[Diagnostic]:
        return [_diagnostic("VL901", [("y = (\n    1)", (1, 1), (1, 6))])] if text.startswith("x = 1") else []

    outcome = fix_text("x = 1\r\nz = 2\r\n", lint, "t.py")
    assert outcome.text == "y = (\r\n    1)\r\nz = 2\r\n"


def test_fix_source_refuses_bytes_that_do_not_round_trip():
    data = b"# coding: utf-8\nx = '\xff'\n"
    result = fix_source(data, lambda text, display: [], "t.py")
    assert result.error is not None and not result.changed


def test_unified_diff_marks_a_missing_final_newline():
    diff = unified_diff("t.py", "a = 1\nb = 2", "a = 1\nb = 3")
    assert diff.endswith("-b = 2\n\\ No newline at end of file\n+b = 3\n\\ No newline at end of file\n")


def test_multiline_edit_keeps_block_indentation():
    source = (
        "import torch\n"
        "def f():\n"
        "    buf = torch.zeros(8, 4)\n"
        "    idx = torch.tensor([1, 2])\n"
        "    buf[idx].copy_(torch.ones(\n"
        "        2, 4))\n"
    )
    outcome = fix_text(source, _lint(source), "t.py", unsafe_fixes=True)
    assert outcome.text == source.replace("buf[idx].copy_(torch.ones(\n        2, 4))", "buf[idx] = torch.ones(\n        2, 4)")
