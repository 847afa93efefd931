"""The package itself: import cost, typing files, docstrings on every public name."""

import inspect
import pathlib
import subprocess
import sys

import linkwise


def test_import_loads_neither_pandas_nor_matplotlib():
    code = ("import sys, linkwise; linkwise.Catalog.default(); "
            "print(sorted(m for m in ('pandas', 'matplotlib', 'numpy') if m in sys.modules))")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "[]"


def test_typing_files_ship_with_the_package():
    package = pathlib.Path(linkwise.__file__).parent
    assert (package / "py.typed").is_file()
    assert (package / "_core.pyi").is_file()


def test_every_public_name_has_a_docstring():
    missing = []
    for name in linkwise.__all__:
        obj = getattr(linkwise, name)
        if name.startswith("__"):
            continue
        if not inspect.getdoc(obj):
            missing.append(name)
        if inspect.isclass(obj):
            for attr, member in vars(obj).items():
                if attr.startswith("_"):
                    continue
                if not (getattr(member, "__doc__", None) or inspect.getdoc(getattr(obj, attr))):
                    missing.append(f"{name}.{attr}")
    assert missing == []
