"""Shared fixtures. Tests needing ../shared skip with a reason when it is absent."""

from __future__ import annotations

from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
SHARED = ROOT.parent / "shared"
DATA = Path(__file__).resolve().parent / "data"


@pytest.fixture(scope="session")
def shared_dir() -> Path:
    if not SHARED.is_dir():
        pytest.skip("../shared is absent (a user's clone): corpora and judgements not available")
    return SHARED


@pytest.fixture
def data_dir() -> Path:
    return DATA
