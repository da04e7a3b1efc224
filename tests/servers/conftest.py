"""Fixtures shared by the per-domain server tests.

Each ``test_<domain>.py`` keeps only what is specific to its domain: the smoke scenario in six seeds,
seed determinism and reset are checked for every domain by ``test_sessions`` and ``test_transports``,
and the helpers they share live in ``harness``."""

from __future__ import annotations

import pytest

from servers.kit import DomainRuntime


@pytest.fixture(scope="module")
def rt(request: pytest.FixtureRequest) -> DomainRuntime:
    """A private runtime of the test module's domain (the ``domain`` it imports), shared by the
    module's tests: each opens its own sessions on it (``harness.new_sid``), so no state leaks."""
    return DomainRuntime(request.module.domain)
