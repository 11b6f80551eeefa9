"""Tests for viewlint.output: every format, from hand-built diagnostics."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from pathlib import Path

import jsonschema
import pytest

import viewlint
import viewlint.diagnostics as diagnostics_module
from viewlint.diagnostics import Applicability, Diagnostic, Edit, Fix, Location, Verdict, rule_url
from viewlint.output import FORMATS, render
from viewlint.output.github import escape_data, escape_property
from viewlint.rule import Rule

SCHEMA_PATH = Path(__file__).parent / "data" / "sarif-schema-2.1.0.json"


class FakeCopyRule(Rule):
    """Flags a needless copy.

    ## Why is this bad?
    It allocates.
    """

    code = "VL201"
    name = "needless-contiguous"
    summary = "`.contiguous()` on a tensor that is already contiguous"
    fix_applicability = Applicability.SAFE


class FakeViewRule(Rule):
    """Flags a view that is written through."""

    code = "VL301"
    name = "write-through-view"
    summary = "In-place write through a view"
    options = {"limit": 3}


class FakeUnusedRule(Rule):
    """Never fires in these tests, but SARIF must still list it."""

    code = "VL999"
    name = "never-fires"
    summary = "Never fires"


RULES = {cls.code: cls for cls in (FakeCopyRule, FakeViewRule, FakeUnusedRule)}

SOURCE_A = "import torch\n\ny = x.contiguous().sum()\nz = torch.zeros(3)\nz[0] += 1\n"
SOURCE_B = "a = 1\n"


def _safe_fix() -> Fix:
    return Fix(Applicability.SAFE, "Remove `.contiguous()`", (Edit("x", Location(3, 5), Location(3, 19)),))


def _unsafe_fix() -> Fix:
    return Fix(Applicability.UNSAFE, "Clone before writing", (Edit("z.clone()", Location(5, 1), Location(5, 2)),))


@pytest.fixture
def diagnostics(tmp_path: Path) -> list[Diagnostic]:
    a = str(tmp_path / "pkg" / "mod a.py")
    b = str(tmp_path / "pkg" / "b.py")
    return [
        Diagnostic(a, "VL201", "needless-contiguous", "`x` is already contiguous", Location(3, 5), Location(3, 19),
                   fix=_safe_fix()),
        Diagnostic(a, "VL301", "write-through-view", "write 50% faster: a, b\nsecond line", Location(4, 1),
                   Location(4, 2),
                   verdict=Verdict("confirmed", "2.0x slower", device="cuda:0", hits=3)),
        Diagnostic(a, "VL301", "write-through-view", "in-place write", Location(5, 1), Location(5, 10),
                   fix=_unsafe_fix(), verdict=Verdict("not reached")),
        Diagnostic(b, "VL000", "syntax-error", "SyntaxError: invalid syntax", Location(1, 1), Location(1, 1)),
    ]


@pytest.fixture
def sources(diagnostics: list[Diagnostic]) -> dict[str, str]:
    return {diagnostics[0].path: SOURCE_A, diagnostics[3].path: SOURCE_B}


def test_formats_tuple() -> None:
    assert FORMATS == ("concise", "full", "json", "json-lines", "sarif", "github", "pylint", "junit")


def test_unknown_format() -> None:
    with pytest.raises(ValueError, match="unknown output format"):
        render("xml", [], rules=RULES)


def test_concise(diagnostics: list[Diagnostic]) -> None:
    a, b = diagnostics[0].path, diagnostics[3].path
    assert render("concise", diagnostics, rules=RULES).splitlines() == [
        f"{a}:3:5: VL201 [*] `x` is already contiguous",
        f"{a}:4:1: VL301 write 50% faster: a, b",
        "second line [confirmed: 2.0x slower]",
        f"{a}:5:1: VL301 in-place write [not reached]",
        f"{b}:1:1: VL000 SyntaxError: invalid syntax",
    ]


def test_concise_unsafe_marker_and_hints(diagnostics: list[Diagnostic]) -> None:
    line = render("concise", diagnostics[2:3], rules=RULES, unsafe_fixes=True)
    assert line == f"{diagnostics[2].path}:5:1: VL301 [*] in-place write [not reached]\n"
    quiet = render("concise", diagnostics[:1], rules=RULES, show_fix_hints=False)
    assert quiet == f"{diagnostics[0].path}:3:5: VL201 `x` is already contiguous\n"


def test_display_only_fix_has_no_marker() -> None:
    d = Diagnostic("m.py", "VL201", "n", "msg", Location(1, 1), Location(1, 2),
                   fix=Fix(Applicability.DISPLAY_ONLY, "look at it"))
    assert render("concise", [d], rules=RULES) == "m.py:1:1: VL201 msg\n"


def test_empty_outputs() -> None:
    for fmt in ("concise", "full", "json-lines", "github", "pylint"):
        assert render(fmt, [], rules=RULES) == ""
    assert json.loads(render("json", [], rules=RULES)) == []
    assert render("json", [], rules=RULES).strip() == "[]"


def test_full(diagnostics: list[Diagnostic], sources: dict[str, str]) -> None:
    out = render("full", diagnostics, rules=RULES, sources=sources)
    blocks = out.split("\n\n")
    assert len(blocks) == 4
    assert blocks[0].splitlines() == [
        f"{diagnostics[0].path}:3:5: VL201 [*] `x` is already contiguous",
        "  |",
        "3 | y = x.contiguous().sum()",
        "  |     ^^^^^^^^^^^^^^ VL201",
        "  |",
        "  = help: Remove `.contiguous()`",
    ]
    assert "4 | z = torch.zeros(3)" in blocks[1]
    assert "  | ^ VL301" in blocks[1]
    assert "  = verdict: confirmed: 2.0x slower" in blocks[1]
    assert "  | ^^^^^^^^^ VL301" in blocks[2]
    assert "  = help: Clone before writing" in blocks[2]
    assert "1 | a = 1" in blocks[3]
    assert "help" not in blocks[3]


def test_full_multiline_range_and_tabs() -> None:
    src = "f(\n\tvalue,\n)\n"
    d = Diagnostic("t.py", "VL201", "n", "msg", Location(2, 2), Location(3, 2))
    out = render("full", [d], rules=RULES, sources={"t.py": src})
    lines = out.splitlines()
    assert "2 | \tvalue," in lines
    assert "  | \t^^^^^^ VL201" in lines
    assert "3 | )" in lines


def test_full_without_source_keeps_header() -> None:
    d = Diagnostic("/no/such/file.py", "VL001", "io-error", "cannot read", Location(1, 1), Location(1, 1))
    assert render("full", [d], rules=RULES) == "/no/such/file.py:1:1: VL001 cannot read\n"


def test_json(diagnostics: list[Diagnostic]) -> None:
    out = render("json", diagnostics, rules=RULES)
    assert out.startswith("[\n  {")
    data = json.loads(out)
    assert data == [d.to_json() for d in diagnostics]
    ruff_keys = {"code", "name", "message", "filename", "location", "end_location", "fix", "noqa_row", "url"}
    for item in data:
        assert ruff_keys <= set(item)
    assert data[0]["fix"]["applicability"] == "safe"
    assert data[0]["url"] == rule_url("VL201")
    assert all(item["cell"] is None for item in data)  # Ruff's key; a notebook cell number otherwise
    assert "verdict" not in data[0]
    assert data[1]["verdict"] == {"status": "confirmed", "evidence": "2.0x slower", "device": "cuda:0", "hits": 3}
    assert data[3]["url"] is None
    # Round trip: the JSON rebuilds the same diagnostics (verdicts aside, which from_cache does not read).
    rebuilt = [Diagnostic.from_cache(item) for item in data]
    assert [r.to_json() for r in rebuilt] == [
        {k: v for k, v in item.items() if k != "verdict"} for item in data
    ]


def test_json_lines(diagnostics: list[Diagnostic]) -> None:
    out = render("json-lines", diagnostics, rules=RULES)
    lines = out.splitlines()
    assert len(lines) == len(diagnostics)
    assert [json.loads(line) for line in lines] == [d.to_json() for d in diagnostics]
    assert all(": " not in line.split('"message"')[0] for line in lines)  # compact separators


def _validator() -> jsonschema.protocols.Validator:
    schema = json.loads(SCHEMA_PATH.read_text(encoding="utf-8"))
    cls = jsonschema.validators.validator_for(schema)  # the schema's declared draft (draft-04)
    cls.check_schema(schema)
    return cls(schema, format_checker=cls.FORMAT_CHECKER)


def test_vendored_schema_is_sarif_210() -> None:
    schema = json.loads(SCHEMA_PATH.read_text(encoding="utf-8"))
    assert schema["$schema"] == "http://json-schema.org/draft-04/schema#"
    assert "sarif-schema-2.1.0" in schema["id"]
    assert schema["properties"]["version"]["enum"] == ["2.1.0"]


def test_sarif(diagnostics: list[Diagnostic], tmp_path: Path) -> None:
    out = render("sarif", diagnostics, rules=RULES, root=tmp_path)
    log = json.loads(out)
    _validator().validate(log)
    assert log["$schema"] == "https://json.schemastore.org/sarif-2.1.0.json"
    assert log["version"] == "2.1.0"
    (run,) = log["runs"]
    driver = run["tool"]["driver"]
    assert driver["name"] == "viewlint"
    assert driver["version"] == viewlint.__version__
    ids = [r["id"] for r in driver["rules"]]
    assert ids[:3] == ["VL201", "VL301", "VL999"]  # every rule, not only those that fired
    assert "VL000" in ids  # the reserved code that occurred gets a descriptor too
    copy = driver["rules"][0]
    assert copy["name"] == "needless-contiguous"
    assert copy["shortDescription"]["text"] == FakeCopyRule.summary
    assert copy["help"]["markdown"] == FakeCopyRule.documentation()
    assert copy.get("helpUri") == rule_url("VL201")
    assert driver["rules"][1]["properties"]["options"] == {"limit": 3}
    assert run["originalUriBaseIds"]["%SRCROOT%"]["uri"] == tmp_path.resolve().as_uri() + "/"

    results = run["results"]
    assert [r["ruleId"] for r in results] == ["VL201", "VL301", "VL301", "VL000"]
    assert [r["level"] for r in results] == ["warning", "warning", "warning", "error"]
    for result in results:
        assert driver["rules"][result["ruleIndex"]]["id"] == result["ruleId"]
    first = results[0]["locations"][0]["physicalLocation"]
    assert first["artifactLocation"] == {"uri": "pkg/mod%20a.py", "uriBaseId": "%SRCROOT%"}
    assert first["region"] == {"startLine": 3, "startColumn": 5, "endLine": 3, "endColumn": 19}
    assert results[3]["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] == "pkg/b.py"
    assert results[1]["message"]["text"] == diagnostics[1].message
    (fix,) = results[0]["fixes"]
    (change,) = fix["artifactChanges"]
    assert change["replacements"] == [
        {"deletedRegion": {"startLine": 3, "startColumn": 5, "endLine": 3, "endColumn": 19},
         "insertedContent": {"text": "x"}}
    ]
    assert fix["description"]["text"] == "Remove `.contiguous()`"
    assert "fixes" not in results[1]
    assert results[1]["properties"]["verdict"]["status"] == "confirmed"
    assert "properties" not in results[0]


def test_no_link_to_an_unchecked_domain(diagnostics: list[Diagnostic], tmp_path: Path) -> None:
    """Until the documentation is published, no output links to a site: JSON `url` is null and
    SARIF has neither `helpUri` nor `informationUri`."""
    assert diagnostics_module.RULES_DOCS_URL is None
    json_out = render("json", diagnostics, rules=RULES)
    sarif_out = render("sarif", diagnostics, rules=RULES, root=tmp_path)
    assert "http" not in json_out.replace("https://json.schemastore.org", "")
    assert all(item["url"] is None for item in json.loads(json_out))
    driver = json.loads(sarif_out)["runs"][0]["tool"]["driver"]
    assert "informationUri" not in driver and not any("helpUri" in rule for rule in driver["rules"])


def test_one_docs_url_for_json_and_sarif(diagnostics: list[Diagnostic], tmp_path: Path,
                                         monkeypatch: pytest.MonkeyPatch) -> None:
    """Once set, the rules' documentation URL is the docs/rules.md anchor of each code, the same in
    JSON `url` and SARIF `helpUri`, reserved codes included."""
    monkeypatch.setattr(diagnostics_module, "RULES_DOCS_URL", "https://example.org/repo/docs/rules.md")
    data = json.loads(render("json", diagnostics, rules=RULES))
    assert data[0]["url"] == "https://example.org/repo/docs/rules.md#vl201"
    log = json.loads(render("sarif", diagnostics, rules=RULES, root=tmp_path))
    _validator().validate(log)
    by_id = {rule["id"]: rule for rule in log["runs"][0]["tool"]["driver"]["rules"]}
    assert by_id["VL201"]["helpUri"] == data[0]["url"]
    assert by_id["VL000"]["helpUri"] == "https://example.org/repo/docs/rules.md#vl000"
    assert by_id["VL000"]["help"]["markdown"].startswith("# syntax-error (VL000)")


def test_sarif_relative_paths_and_outside_root(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    inside = Diagnostic("sub/x.py", "VL201", "n", "m", Location(1, 1), Location(1, 2))
    outside = Diagnostic(str(tmp_path.parent / "elsewhere.py"), "VL201", "n", "m", Location(0, 0), Location(0, 0))
    log = json.loads(render("sarif", [inside, outside], rules=RULES))
    _validator().validate(log)
    locs = [r["locations"][0]["physicalLocation"] for r in log["runs"][0]["results"]]
    assert locs[0]["artifactLocation"] == {"uri": "sub/x.py", "uriBaseId": "%SRCROOT%"}
    assert locs[1]["artifactLocation"]["uri"].startswith("file:///")
    assert "uriBaseId" not in locs[1]["artifactLocation"]
    assert locs[1]["region"]["startLine"] == 1 and locs[1]["region"]["startColumn"] == 1


def test_sarif_empty_validates() -> None:
    log = json.loads(render("sarif", [], rules=RULES))
    _validator().validate(log)
    assert log["runs"][0]["results"] == []
    assert len(log["runs"][0]["tool"]["driver"]["rules"]) == 3


def test_github_escaping() -> None:
    assert escape_data("50%\r\nx") == "50%25%0D%0Ax"
    assert escape_property("a:b,c%\n") == "a%3Ab%2Cc%25%0A"


def test_github(diagnostics: list[Diagnostic]) -> None:
    out = render("github", diagnostics, rules=RULES)
    lines = out.splitlines()
    assert len(lines) == 4
    a = escape_property(diagnostics[0].path)
    assert lines[0] == (
        f"::warning file={a},line=3,col=5,endLine=3,endColumn=19,title=viewlint (VL201)"
        "::VL201 `x` is already contiguous"
    )
    assert lines[1] == (
        f"::warning file={a},line=4,col=1,endLine=4,endColumn=2,title=viewlint (VL301)"
        "::VL301 write 50%25 faster: a, b%0Asecond line [confirmed: 2.0x slower]"
    )
    assert lines[3].startswith("::error file=")
    assert lines[3].endswith("title=viewlint (VL000)::VL000 SyntaxError: invalid syntax")


def test_github_escapes_file_property() -> None:
    d = Diagnostic("dir,1/a:b%.py", "VL201", "n", "m", Location(1, 2), Location(1, 3))
    assert render("github", [d], rules=RULES) == (
        "::warning file=dir%2C1/a%3Ab%25.py,line=1,col=2,endLine=1,endColumn=3,title=viewlint (VL201)::VL201 m\n"
    )


def test_pylint(diagnostics: list[Diagnostic]) -> None:
    a, b = diagnostics[0].path, diagnostics[3].path
    lines = render("pylint", diagnostics, rules=RULES).splitlines()
    assert lines[0] == f"{a}:3: [VL201] `x` is already contiguous"
    assert lines[-1] == f"{b}:1: [VL000] SyntaxError: invalid syntax"


def test_junit(diagnostics: list[Diagnostic]) -> None:
    out = render("junit", diagnostics, rules=RULES)
    assert out.startswith('<?xml version="1.0" encoding="UTF-8"?>')
    root = ET.fromstring(out.split("\n", 1)[1])
    assert root.tag == "testsuites"
    assert root.attrib["name"] == "viewlint"
    assert root.attrib["tests"] == "4" and root.attrib["failures"] == "4" and root.attrib["errors"] == "0"
    suites = root.findall("testsuite")
    assert [s.attrib["name"] for s in suites] == [diagnostics[0].path, diagnostics[3].path]
    assert [s.attrib["failures"] for s in suites] == ["3", "1"]
    cases = suites[0].findall("testcase")
    assert [c.attrib["name"] for c in cases] == ["org.viewlint.VL201", "org.viewlint.VL301", "org.viewlint.VL301"]
    assert cases[0].attrib["classname"] == diagnostics[0].path[: -len(".py")]
    failure = cases[1].find("failure")
    assert failure is not None
    assert failure.attrib["message"] == diagnostics[1].message  # newline survives attribute escaping
    assert failure.text == "line 4, col 1, write 50% faster: a, b\nsecond line [confirmed: 2.0x slower]"
    assert len(root.findall(".//failure")) == 4


def test_junit_escapes_markup_and_control_chars() -> None:
    d = Diagnostic("a.py", "VL201", "n", 'x < y & "z" \x01', Location(1, 1), Location(1, 2))
    root = ET.fromstring(render("junit", [d], rules=RULES).split("\n", 1)[1])
    failure = root.find(".//failure")
    assert failure is not None and failure.attrib["message"] == 'x < y & "z" \ufffd'


def test_junit_empty() -> None:
    root = ET.fromstring(render("junit", [], rules=RULES).split("\n", 1)[1])
    assert root.attrib["failures"] == "0"
    (case,) = root.iter("testcase")
    assert case.attrib["name"] == "No errors found"
    assert case.find("failure") is None


@pytest.mark.parametrize("fmt", FORMATS)
def test_every_format_renders_reserved_codes_without_rules(fmt: str) -> None:
    d = Diagnostic("x.py", "VL002", "internal-error", "boom", Location(1, 1), Location(1, 1))
    assert "VL002" in render(fmt, [d], rules={})


def test_notebook_cells_in_every_format(tmp_path: Path) -> None:
    """A finding in a notebook cell names the cell; formats that carry lines of the file do not
    pass cell rows off as lines of the .ipynb JSON."""
    path = str(tmp_path / "nb.ipynb")
    cell = Diagnostic("nb.ipynb", "VL201", "needless-contiguous", "msg", Location(2, 5), Location(2, 9),
                      fix=_safe_fix(), cell=3)
    error = Diagnostic("nb.ipynb", "VL000", "syntax-error", "syntax error: bad", Location(1, 3), Location(1, 3), cell=4)
    assert render("concise", [cell], rules=RULES) == "nb.ipynb:cell 3:2:5: VL201 [*] msg\n"
    assert render("pylint", [cell], rules=RULES) == "nb.ipynb:cell 3:2: [VL201] msg\n"
    assert render("github", [cell, error], rules=RULES).splitlines() == [
        "::warning file=nb.ipynb,title=viewlint (VL201)::cell 3:2:5: VL201 msg",
        "::error file=nb.ipynb,title=viewlint (VL000)::cell 4:1:3: VL000 syntax error: bad",
    ]
    case = ET.fromstring(render("junit", [cell], rules=RULES)).find("testsuite/testcase")
    assert case is not None and "line" not in case.attrib
    assert case.findtext("failure") == "cell 3, line 2, col 5, msg"
    from dataclasses import replace

    log = json.loads(render("sarif", [replace(cell, path=path), replace(error, path=path)], rules=RULES, root=tmp_path))
    _validator().validate(log)
    result = log["runs"][0]["results"][0]
    assert result["locations"][0]["physicalLocation"] == {"artifactLocation": {"uri": "nb.ipynb", "uriBaseId": "%SRCROOT%"}}
    assert result["locations"][0]["logicalLocations"] == [{"name": "cell 3", "kind": "module"}]
    assert result["properties"]["cell"] == 3
    assert result["properties"]["cellRegion"] == {"startLine": 2, "startColumn": 5, "endLine": 2, "endColumn": 9}
    assert "fixes" not in result  # the edits' rows are cell rows, not rows of the file
    assert [r["level"] for r in log["runs"][0]["results"]] == ["warning", "error"]
