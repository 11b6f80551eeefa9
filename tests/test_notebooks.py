"""Jupyter notebooks, as a user meets them: findings per cell, fixes that touch only the fixed
cell, magics, `# noqa`, `--add-noqa`, malformed notebooks, discovery, the cache and the formats.

Every notebook here is written by `nbformat`, as Jupyter writes them.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import nbformat
import pytest
from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook, new_output

from conftest import OPT_IN_CONFIG, ROOT, run_viewlint

import viewlint.engine as engine
from viewlint.cli import run_check
from viewlint.notebook import JoinedCells, Notebook, NotebookError

IMPORTS = "import torch\nimport torch.nn as nn"
LOST_WRITE = (
    "def write_rows(buf: torch.Tensor, idx: list[int], v: torch.Tensor) -> None:\n"
    "    buf[idx].copy_(v)"
)
MODEL = (
    "class Model(nn.Module):\n"
    "    def __init__(self):\n"
    "        super().__init__()\n"
    "        self.cache = {}\n"
    "\n"
    "    def forward(self, x: torch.Tensor, lengths: torch.Tensor) -> torch.Tensor:\n"
    "        n = lengths.max().item()\n"
    "        return x[:, :n]\n"
    "\n"
    "    def remember(self, k, x: torch.Tensor) -> None:\n"
    "        self.cache[k] = torch.split(x, 2)[0]"
)
EXPECTED = [
    "demo.ipynb:cell 3:2:5: VL201",
    "demo.ipynb:cell 5:7:13: VL401",
    "demo.ipynb:cell 5:11:25: VL101",
]


def write_notebook(path: Path, *cells: Any, **metadata: Any) -> Path:
    """A notebook with these cells (a str is a code cell), written by nbformat."""
    notebook = new_notebook()
    notebook.metadata.update({"kernelspec": {"name": "python3", "display_name": "Python 3", "language": "python"},
                              **metadata})
    notebook.cells = [new_code_cell(cell) if isinstance(cell, str) else cell for cell in cells]
    nbformat.write(notebook, path)
    return path


def demo(path: Path) -> Path:
    """The notebook of the issue: a lost write, a hidden sync and a view stored in a cache, with
    markdown, outputs and execution counts around them."""
    return write_notebook(
        path,
        new_markdown_cell("# Training notes"),
        new_code_cell("%matplotlib inline\n" + IMPORTS, execution_count=1),
        new_code_cell(LOST_WRITE, execution_count=2, outputs=[new_output("stream", text="done\n")]),
        new_markdown_cell("The model:"),
        new_code_cell(MODEL, execution_count=3,
                      outputs=[new_output("execute_result", data={"text/plain": "Model()"}, execution_count=3)]),
    )


def check(capsys: pytest.CaptureFixture[str], *paths: str, **options: Any) -> tuple[int, str, str]:
    code = run_check(paths, jobs=1, no_cache=options.pop("no_cache", True), **options)
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def heads(out: str) -> list[str]:
    """`path:cell N:row:col: CODE` of each concise line."""
    return [re.match(r".*?: VL\d{3}", line).group(0) for line in out.splitlines()]  # type: ignore[union-attr]


@pytest.fixture
def in_tmp(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "pyproject.toml").write_text(OPT_IN_CONFIG)  # the notebook caches views (VL101)
    return tmp_path


# ---------------------------------------------------------------------------- the notebook


def test_three_findings_with_their_cells(in_tmp: Path) -> None:
    demo(in_tmp / "demo.ipynb")
    result = run_viewlint("--no-cache", "demo.ipynb", cwd=in_tmp)
    assert result.returncode == 1, result.stderr
    assert heads(result.stdout) == EXPECTED
    assert "Traceback" not in result.stderr


def test_json_names_the_cell(in_tmp: Path, capsys: pytest.CaptureFixture[str]) -> None:
    demo(in_tmp / "demo.ipynb")
    code, out, _ = check(capsys, "demo.ipynb", output_format="json")
    assert code == 1
    found = [(d["cell"], d["location"]["row"], d["location"]["column"], d["code"], d["noqa_row"]) for d in json.loads(out)]
    assert found == [(3, 2, 5, "VL201", 2), (5, 7, 13, "VL401", 7), (5, 11, 25, "VL101", 11)]
    fix = json.loads(out)[0]["fix"]
    assert fix["edits"][0]["location"] == {"row": 2, "column": 5}  # edits count in the cell too


def test_fix_changes_only_the_fixed_cell_and_nbformat_validates(in_tmp: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = demo(in_tmp / "demo.ipynb")
    before = path.read_bytes()
    code, out, err = check(capsys, "demo.ipynb", fix=True)
    assert code == 1 and path.read_bytes() == before  # every fix here is unsafe: plain --fix changes nothing
    assert "0 fixed, 3 remaining" in err
    code, out, err = check(capsys, "demo.ipynb", fix=True, unsafe_fixes=True, select=("VL201",))
    assert code == 0 and "1 fixed, 0 remaining" in err
    after = path.read_bytes()
    fixed = nbformat.reads(after.decode(), as_version=4)
    nbformat.validate(fixed)
    original = nbformat.reads(before.decode(), as_version=4)
    assert fixed.cells[2].source == LOST_WRITE.replace("buf[idx].copy_(v)", "buf[idx] = v")
    # Everything else, outputs and metadata included, is as it was…
    fixed.cells[2].source = original.cells[2].source
    assert fixed == original
    # …and so are the bytes: one changed line of JSON.
    changed = [(old, new) for old, new in zip(before.splitlines(), after.splitlines()) if old != new]
    assert changed == [(b'    "    buf[idx].copy_(v)"', b'    "    buf[idx] = v"')]
    assert len(before.splitlines()) == len(after.splitlines()) and after.endswith(b"}\n")


def test_diff_shows_the_cell_and_writes_nothing(in_tmp: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = demo(in_tmp / "demo.ipynb")
    before = path.read_bytes()
    code, out, _ = check(capsys, "demo.ipynb", diff=True, unsafe_fixes=True)
    assert code == 1
    assert out.splitlines()[:2] == ["--- demo.ipynb:cell 3", "+++ demo.ipynb:cell 3"]
    assert "-    buf[idx].copy_(v)" in out and "+    buf[idx] = v" in out
    assert path.read_bytes() == before


def test_stdin_with_a_notebook_filename(in_tmp: Path) -> None:
    path = demo(in_tmp / "demo.ipynb")
    result = run_viewlint("--no-cache", "-", "--stdin-filename", "demo.ipynb", cwd=in_tmp, input=path.read_text())
    assert result.returncode == 1, result.stderr
    assert heads(result.stdout) == EXPECTED


def test_fix_through_stdin_prints_the_fixed_notebook(in_tmp: Path) -> None:
    path = demo(in_tmp / "demo.ipynb")
    result = run_viewlint("--no-cache", "--fix", "--unsafe-fixes", "-", "--stdin-filename", "demo.ipynb", cwd=in_tmp, input=path.read_text())
    fixed = nbformat.reads(result.stdout, as_version=4)
    nbformat.validate(fixed)
    assert fixed.cells[2].source.endswith("buf[idx] = v")
    assert heads(result.stderr.splitlines()[0] + "\n") == EXPECTED[1:2]


# ---------------------------------------------------------------------------- magics and escapes


MAGICS = (
    "%load_ext autoreload\n"
    "!pip install --quiet einops\n"
    "files = !ls\n"
    "torch.nn.Linear?\n"
    "for step in range(2):\n"
    "    %time buf[[0]].zero_()\n"
    "    buf[[1]].zero_()\n"
    "%timeit -n 1 \\\n"
    "    f(x)\n"
    "buf[[2]].zero_()"
)


def test_magics_are_skipped_without_moving_findings(in_tmp: Path, capsys: pytest.CaptureFixture[str]) -> None:
    write_notebook(
        in_tmp / "magic.ipynb",
        "import torch\nbuf = torch.zeros(4, 4)",
        MAGICS,
        "%%time\nbuf[[3]].zero_()",
        "%%bash\nfor f in *.py; do echo $f; done",
    )
    code, out, _ = check(capsys, "magic.ipynb", select=("VL201",))
    assert code == 1
    assert heads(out) == ["magic.ipynb:cell 2:7:5: VL201", "magic.ipynb:cell 2:10:1: VL201", "magic.ipynb:cell 3:2:1: VL201"]


def test_fix_keeps_magics_as_written(in_tmp: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = write_notebook(in_tmp / "magic.ipynb", "import torch\nbuf = torch.zeros(4, 4)\nv = torch.ones(4)",
                          MAGICS + "\nbuf[[1, 2]].copy_(v)")
    check(capsys, "magic.ipynb", fix=True, unsafe_fixes=True, select=("VL201",))
    cell = nbformat.read(path, as_version=4).cells[1].source
    fixed_python = {"buf[[1]].zero_()": "buf[[1]] = 0", "buf[[2]].zero_()": "buf[[2]] = 0", ".copy_(v)": " = v"}
    expected = MAGICS + "\nbuf[[1, 2]].copy_(v)"
    for old, new in fixed_python.items():
        expected = expected.replace(old, new)
    assert cell == expected
    assert "%time buf[[0]].zero_()" in cell  # inside a magic: neither linted nor fixed


def test_magic_lookalikes_inside_strings_and_brackets_are_python() -> None:
    source = 'doc = """\n%d items\n!important\nwhat?\n"""\ntotal = (1 +\n    2)\nprint(doc % 3)'
    notebook = Notebook.from_bytes(nbformat.writes(_nb(source)).encode())
    assert notebook.python_source == source + "\n"


def test_cell_of_maps_rows_back() -> None:
    notebook = Notebook.from_bytes(nbformat.writes(_nb("a = 1\nb = 2", "# markdown", "c = 3")).encode())
    rows = notebook.python_source.split("\n")
    assert notebook.cell_of(rows.index("b = 2") + 1) == (1, 2)
    assert notebook.cell_of(rows.index("c = 3") + 1) == (3, 1)
    assert notebook.python_row(3, 1) == rows.index("c = 3") + 1


def _nb(*cells: str) -> Any:
    notebook = new_notebook()
    notebook.cells = [new_markdown_cell(c) if c.startswith("# markdown") else new_code_cell(c) for c in cells]
    return notebook


# ---------------------------------------------------------------------------- noqa


def test_noqa_in_a_cell(in_tmp: Path, capsys: pytest.CaptureFixture[str]) -> None:
    demo_path = demo(in_tmp / "demo.ipynb")
    notebook = nbformat.read(demo_path, as_version=4)
    notebook.cells[2].source = notebook.cells[2].source + "  # noqa: VL201"
    nbformat.write(notebook, demo_path)
    _, out, _ = check(capsys, "demo.ipynb")
    assert heads(out) == EXPECTED[1:]


def test_file_level_noqa_in_any_cell_and_top_level_await(in_tmp: Path, capsys: pytest.CaptureFixture[str]) -> None:
    gather = "def f(buf: torch.Tensor, idx: list[int]) -> None:\n    buf[idx].zero_()"
    write_notebook(in_tmp / "quiet.ipynb", "import torch\nawait asyncio.sleep(0)", gather, "# viewlint: noqa: VL201")
    write_notebook(in_tmp / "loud.ipynb", "import torch\nawait asyncio.sleep(0)", gather)
    _, out, _ = check(capsys, "quiet.ipynb", "loud.ipynb")
    assert heads(out) == ["loud.ipynb:cell 2:2:5: VL201"]


def test_add_noqa_writes_into_the_cells(in_tmp: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = demo(in_tmp / "demo.ipynb")
    code, _, err = check(capsys, "demo.ipynb", add_noqa=True)
    assert code == 0 and "Added 3 noqa directives." in err
    notebook = nbformat.read(path, as_version=4)
    nbformat.validate(notebook)
    assert notebook.cells[2].source.endswith("buf[idx].copy_(v)  # noqa: VL201")
    assert "n = lengths.max().item()  # noqa: VL401\n" in notebook.cells[4].source
    assert notebook.cells[4].outputs[0]["data"] == {"text/plain": "Model()"}
    code, out, err = check(capsys, "demo.ipynb")
    assert (code, out) == (0, "") and "All checks passed!" in err


# ---------------------------------------------------------------------------- malformed notebooks


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ('{"cells": [', "invalid notebook: not valid JSON: Expecting value (line 1, column 12)"),
        ('{"metadata": {}, "nbformat": 4, "nbformat_minor": 5}', 'invalid notebook: no "cells" list: not a Jupyter notebook'),
        ('{"worksheets": [], "nbformat": 3}', "invalid notebook: nbformat 3 is not supported"),
        ('{"cells": [{"cell_type": "code", "metadata": {}}], "nbformat": 4}', 'invalid notebook: cell 1: "source" must be a string or a list of strings'),
        ('{"cells": [{"source": "x"}], "nbformat": 4}', 'invalid notebook: cell 1: no "cell_type"'),
        ('[1, 2]', "invalid notebook: the top level must be a JSON object, got list"),
        ('{"cells": [{"cell_type": "markdown", "source": "# notes", "metadata": {}}], "nbformat": 4}',
         "invalid notebook: no code cells to lint"),
    ],
)
def test_malformed_notebook_is_vl001(in_tmp: Path, content: str, message: str) -> None:
    (in_tmp / "broken.ipynb").write_text(content)
    result = run_viewlint("--no-cache", ".", cwd=in_tmp)
    assert result.returncode == 1
    assert result.stdout.startswith(f"broken.ipynb:1:1: VL001 {message}"), result.stdout
    assert "Traceback" not in result.stderr


def test_notebook_in_another_language_has_nothing_to_lint(in_tmp: Path, capsys: pytest.CaptureFixture[str]) -> None:
    write_notebook(in_tmp / "r.ipynb", "x <- c(1, 2)\nbuf[idx].copy_(v)", language_info={"name": "R"})
    assert check(capsys, "r.ipynb")[:2] == (0, "")


# ---------------------------------------------------------------------------- discovery, config, cache


def test_folders_include_notebooks_by_default(in_tmp: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (in_tmp / "nbs").mkdir()
    demo(in_tmp / "nbs" / "demo.ipynb")
    _, out, _ = check(capsys, ".")
    assert heads(out) == [line.replace("demo.ipynb", "nbs/demo.ipynb") for line in EXPECTED]


def test_include_setting_can_leave_notebooks_out(in_tmp: Path, capsys: pytest.CaptureFixture[str]) -> None:
    demo(in_tmp / "demo.ipynb")
    (in_tmp / "pyproject.toml").write_text(OPT_IN_CONFIG + 'include = ["*.py"]\n')
    code, out, err = check(capsys, ".")
    assert (code, out) == (0, "") and "no Python files found" in err
    # A notebook named on the command line is still linted, as in Ruff.
    assert heads(check(capsys, "demo.ipynb")[1]) == EXPECTED


def test_extend_include_adds_files(in_tmp: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (in_tmp / "train.pyw").write_text("import torch\n\ndef f(buf: torch.Tensor, idx: list[int]) -> None:\n    buf[idx].zero_()\n")
    assert check(capsys, ".")[:2] == (0, "")
    (in_tmp / "pyproject.toml").write_text(OPT_IN_CONFIG + 'extend-include = ["*.pyw"]\n')
    assert heads(check(capsys, ".")[1]) == ["train.pyw:4:5: VL201"]


def test_include_must_be_a_list_of_globs(in_tmp: Path) -> None:
    (in_tmp / "pyproject.toml").write_text(OPT_IN_CONFIG + 'extend-include = "*.ipynb"\n')
    result = run_viewlint("--no-cache", ".", cwd=in_tmp)
    assert result.returncode == 2
    assert "extend-include: must be a list of strings, got str" in result.stderr


def test_cache_serves_notebooks(in_tmp: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    demo(in_tmp / "demo.ipynb")
    first = check(capsys, "demo.ipynb", no_cache=False, output_format="json")

    def fail(*args: object, **kwargs: object) -> None:
        raise AssertionError("linted although the cache holds the result")

    monkeypatch.setattr(engine, "lint_text_with_dependencies", fail)
    assert check(capsys, "demo.ipynb", no_cache=False, output_format="json") == first
    assert json.loads(first[1])[0]["cell"] == 3


# ---------------------------------------------------------------------------- writing the JSON back


@pytest.mark.parametrize("indent", [1, 2, 4])
@pytest.mark.parametrize("newline", ["\n", "\r\n"])
def test_written_back_as_it_was_written(tmp_path: Path, indent: int, newline: str) -> None:
    raw = {
        "nbformat": 4, "nbformat_minor": 5, "metadata": {"zeta": 1, "alpha": "é"},
        "cells": [
            {"cell_type": "code", "id": "b", "metadata": {}, "execution_count": None, "outputs": [],
             "source": "import torch\nx = torch.zeros(3)"},
            {"cell_type": "code", "id": "a", "metadata": {}, "execution_count": None, "outputs": [],
             "source": ["y = 1\n", "z = 2"]},
        ],
    }
    data = (json.dumps(raw, indent=indent, ensure_ascii=False).replace("\n", newline)).encode()  # no final newline
    notebook = Notebook.from_bytes(data)
    assert notebook.with_sources(notebook.python_source).to_bytes() == data
    changed = notebook.with_sources(notebook.python_source.replace("z = 2", "z = 3"))
    expected = dict(raw, cells=[raw["cells"][0], dict(raw["cells"][1], source=["y = 1\n", "z = 3"])])
    assert changed.to_bytes() == json.dumps(expected, indent=indent, ensure_ascii=False).replace("\n", newline).encode()


def test_a_fix_that_breaks_a_cell_boundary_is_refused() -> None:
    notebook = Notebook.from_bytes(nbformat.writes(_nb("a = 1", "b = 2")).encode())
    with pytest.raises(NotebookError, match="boundary before cell 2"):
        notebook.with_sources(notebook.python_source.replace("\n# viewlint-cell 2\n", "\n"))



# ---------------------------------------------------------------------------- indented cells (issue 29)

INDENTED = (
    "\n"
    "    buf = torch.zeros(4, 4)\n"
    "    buf[[1]].zero_()\n"
    "\n"
    "    y = torch.zeros(4).contiguous()\n"
    "  # a comment less indented, as IPython leaves it"
)


def test_an_indented_cell_is_dedented_as_ipython_runs_it(in_tmp: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # IPython takes the first code line's indentation off every line that starts with it (a cell pasted from
    # inside a function runs); read as it is written, the cell was a syntax error that hid every finding.
    write_notebook(in_tmp / "pasted.ipynb", "import torch", INDENTED, "buf2 = torch.zeros(2)\nbuf2[[0]].zero_()")
    code, out, _ = check(capsys, "pasted.ipynb", select=("VL000", "VL201", "VL301"))
    assert code == 1
    # Reported in the cell's own columns.
    assert heads(out) == ["pasted.ipynb:cell 2:3:5: VL201", "pasted.ipynb:cell 2:5:9: VL301",
                          "pasted.ipynb:cell 3:2:1: VL201"]


def test_a_fix_in_an_indented_cell_is_written_back_indented(in_tmp: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = write_notebook(in_tmp / "pasted.ipynb", "import torch", INDENTED)
    check(capsys, "pasted.ipynb", fix=True, unsafe_fixes=True, select=("VL301",))
    cell = nbformat.read(path, as_version=4).cells[1].source
    assert cell == INDENTED.replace("torch.zeros(4).contiguous()", "torch.zeros(4)")


@pytest.mark.parametrize("cell", [INDENTED, "\tx = 1\n\tif x:\n\t\ty = 2\n", "  a = 1\n   b = 2\n", "x = 1\n    y = 2\n"])
def test_cells_are_dedented_as_ipython_dedents_them(cell: str) -> None:
    transformer = pytest.importorskip("IPython.core.inputtransformer2").TransformerManager()
    python = JoinedCells([cell]).cells[0].python
    # IPython also drops the leading blank lines (we keep them, so rows stay): compare from the first code line.
    expected = transformer.transform_cell(cell)
    assert python.lstrip("\n").rstrip("\n") == expected.rstrip("\n")
