"""pytest setup for the Python package's tests: each test gets a generator seeded from its own
name, so that a failure replays alone."""

import zlib

import pytest
import torch


@pytest.fixture
def gen(request):
    g = torch.Generator().manual_seed(zlib.crc32(request.node.name.encode()))
    return g
