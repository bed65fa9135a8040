"""Link Grammar's dictionary is freed while its binding can still free it: when its parser goes,
or at interpreter exit, never during the module teardown that follows (where the binding's
`Dictionary.__del__` finds its module's globals gone and prints a TypeError)."""

from __future__ import annotations

import gc
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from features.extract import extract
from features.resources import Resources

pytest.importorskip("linkgrammar", reason="Link Grammar's Python bindings are not installed")

ROOT = Path(__file__).resolve().parents[2]

# The parser is kept on a module imported before Link Grammar's (as a test runner's caches keep
# what they hold), so the interpreter frees it only after it has torn Link Grammar's module down.
HELD_TO_THE_END = textwrap.dedent(
    """
    import json

    from features.extract import extract
    from features.parsing import parse
    from features.resources import Resources

    resources = Resources()
    row = extract(parse(["The cat sat on the mat."]), ["linkgrammar.v5"], resources)[0]
    json.held_until_exit = resources
    print(row["linkgrammar.v5/full_parse"])
    """
)


def test_a_process_holding_the_parser_to_the_end_exits_without_a_traceback():
    out = subprocess.run(
        [sys.executable, "-c", HELD_TO_THE_END],
        capture_output=True,
        text=True,
        cwd=ROOT,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        timeout=300,
        check=True,
    )
    assert out.stdout.strip() == "1.0"  # it did parse
    assert "Traceback" not in out.stderr and "Exception ignored" not in out.stderr, out.stderr


def test_the_dictionary_is_freed_with_its_parser():
    from examples import sentence

    resources = Resources()
    extract([sentence("The cat sat on the mat .")], ["linkgrammar.v5"], resources)
    dictionary = resources.get("linkgrammar", None).dictionary
    assert hasattr(dictionary, "_obj")  # open while the parser is held
    del resources
    gc.collect()
    assert not hasattr(dictionary, "_obj")  # freed with it, not kept until exit
