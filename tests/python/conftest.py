"""Shared fixtures of the Python package's tests (pytest tests/python, after `pip install .`)."""

import os
import pathlib
import shutil
import subprocess
import json

import pytest

import linkwise

REPO = pathlib.Path(__file__).resolve().parents[2]


@pytest.fixture(scope="session")
def catalog() -> linkwise.Catalog:
    return linkwise.Catalog.default()


@pytest.fixture(scope="session")
def repo() -> pathlib.Path:
    return REPO


def linkwise_bin():
    """The built `linkwise` CLI (env LINKWISE_BIN), or None when unset."""
    path = os.environ.get("LINKWISE_BIN")
    if not path:
        return None
    assert pathlib.Path(path).is_file(), f"LINKWISE_BIN={path} is not a file"
    return path


def run_cli_json(*args):
    """`linkwise ARGS --json` parsed; skips the calling test when LINKWISE_BIN is unset."""
    path = linkwise_bin()
    if path is None:
        pytest.skip("LINKWISE_BIN is not set: no CLI to compare with")
    done = subprocess.run([path, *args, "--json"], capture_output=True, text=True, check=True)
    return json.loads(done.stdout)
