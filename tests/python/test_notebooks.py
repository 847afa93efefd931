"""Every notebook in notebooks/ runs top to bottom, offline, without an error (nbclient), sets no
matplotlib backend of its own (so its charts display in Jupyter), and draws its charts as images:
both when run here and in the outputs committed with it (so they show on a code host)."""

import os
import pathlib

import pytest

NOTEBOOKS = sorted((pathlib.Path(__file__).resolve().parents[2] / "notebooks").glob("*.ipynb"))


def _images(notebook):
    return [out for cell in notebook.cells if cell.cell_type == "code"
            for out in cell.get("outputs", []) if "image/png" in out.get("data", {})]


def test_the_notebooks_are_found():
    names = {path.name for path in NOTEBOOKS}
    assert {"finetune-and-serve-llama-3.1-70b.ipynb", "what-the-interconnect-buys.ipynb",
            "is-this-cluster-what-i-paid-for.ipynb"} <= names


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_notebook_forces_no_backend_and_is_committed_with_its_charts(path):
    nbformat = pytest.importorskip("nbformat")
    notebook = nbformat.read(path, as_version=4)
    sources = "\n".join(cell.source for cell in notebook.cells if cell.cell_type == "code")
    assert "matplotlib.use(" not in sources and "MPLBACKEND" not in sources
    assert "Agg" not in sources
    assert _images(notebook), f"{path.name}: no chart in the committed outputs"


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_notebook_runs(path, monkeypatch):
    nbformat = pytest.importorskip("nbformat")
    nbclient = pytest.importorskip("nbclient")
    if os.environ.get("LINKWISE_BIN"):
        monkeypatch.setenv("LINKWISE_BIN", os.environ["LINKWISE_BIN"])  # the third notebook runs the CLI
    notebook = nbformat.read(path, as_version=4)
    for cell in notebook.cells:
        if cell.cell_type == "code":
            cell.outputs = []
    client = nbclient.NotebookClient(notebook, timeout=600, kernel_name="python3",
                                     resources={"metadata": {"path": str(path.parent)}})
    client.execute()  # raises CellExecutionError, with the cell and traceback, on any error
    errors = [out for cell in notebook.cells if cell.cell_type == "code"
              for out in cell.get("outputs", []) if out.get("output_type") == "error"]
    assert errors == []
    assert _images(notebook), f"{path.name}: ran, but drew no chart"
