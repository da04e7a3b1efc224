"""The suite's own set-up: an expensive session fixture is built once even when pytest-xdist
splits the session over workers (``tests/conftest.py: once_per_session``)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.conftest import once_per_session


class _Factory:
    """The one method of ``TempPathFactory`` the helper reads, at a chosen base directory."""

    def __init__(self, base: Path) -> None:
        self.base = base

    def getbasetemp(self) -> Path:
        return self.base


def test_built_once_then_read_back_by_every_worker(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[Path] = []

    def make(out: Path) -> dict[str, str]:
        calls.append(out)
        (out / "built").write_text("x")
        return {"dir": str(out)}

    monkeypatch.setenv("PYTEST_XDIST_WORKER", "gw0")
    first = once_per_session(_Factory(tmp_path / "gw0"), "thing", make)  # type: ignore[arg-type]
    monkeypatch.setenv("PYTEST_XDIST_WORKER", "gw1")
    second = once_per_session(_Factory(tmp_path / "gw1"), "thing", make)  # type: ignore[arg-type]
    assert calls == [tmp_path / "thing"]  # the workers' shared parent, built by the first only
    assert first == second == {"dir": str(tmp_path / "thing")}
    # without xdist the session's own base directory holds it
    monkeypatch.delenv("PYTEST_XDIST_WORKER")
    once_per_session(_Factory(tmp_path / "solo"), "thing", make)  # type: ignore[arg-type]
    assert calls[-1] == tmp_path / "solo" / "thing"
