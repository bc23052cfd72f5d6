"""Shared fixtures of the srl pytest suite (run by .ci/run after `maturin develop`)."""

import os
from pathlib import Path

import pytest

DATA = Path(__file__).parent / "data"


@pytest.fixture
def data() -> Path:
    """The suite's own small inputs (copies of crates/srl-cli/tests/fixtures)."""
    return DATA


@pytest.fixture
def srl_data_dir() -> Path:
    """The shared data directory ($SRL_DATA_DIR); tests that need it skip without it."""
    d = os.environ.get("SRL_DATA_DIR")
    if not d or not Path(d).is_dir():
        pytest.skip("SRL_DATA_DIR is not set or not a folder")
    return Path(d)
