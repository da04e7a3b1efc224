"""A launch's ``model.gguf``: resolved from a path or a wheel, converted once per run directory,
and refused at config time when the file is missing."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from prove_jax.config import ConfigError, LaunchConfig, check, load
from prove_jax.convert import converted, resolve_gguf
from prove_jax.convert.source import SOURCE_FILE
from tests.convert.gguf_testlib import TinyCase


def test_resolve_a_path_and_a_file_inside_an_installed_package(tmp_path: Path) -> None:
    f = tmp_path / "m.gguf"
    f.write_bytes(b"GGUF")
    assert resolve_gguf(str(f)) == f.resolve()
    # a package resolved without importing it (pytest's own package stands in for a model wheel)
    assert resolve_gguf("package:_pytest/__init__.py").name == "__init__.py"
    with pytest.raises(FileNotFoundError, match="not installed"):
        resolve_gguf("package:no_such_wheel_xyz/m.gguf")
    with pytest.raises(FileNotFoundError, match="package:DIST/FILE"):
        resolve_gguf("package:_pytest")
    with pytest.raises(FileNotFoundError, match="no such file"):
        resolve_gguf(str(tmp_path / "absent.gguf"))


def test_converted_once_and_again_when_the_file_changes(tmp_path: Path,
                                                         tiny_cases: dict[tuple[str, str], TinyCase]) -> None:
    src = tmp_path / "model.gguf"
    shutil.copy(tiny_cases[("qwen3", "F32")].gguf, src)
    out = converted(str(src), tmp_path / "hf", progress=False)
    assert (out / "config.json").is_file() and (out / SOURCE_FILE).is_file()
    weights = out / "model.safetensors"
    first = weights.stat().st_mtime_ns
    assert converted(str(src), out, progress=False) == out
    assert weights.stat().st_mtime_ns == first  # the same file: reused, not rewritten
    os.utime(src, ns=(first + 10**9, first + 10**9))  # "changed": converted again
    converted(str(src), out, progress=False)
    assert weights.stat().st_mtime_ns != first


def test_a_missing_gguf_fails_at_config_time(tmp_path: Path) -> None:
    cfg = load(LaunchConfig, None, [f"model.gguf={tmp_path / 'absent.gguf'}", f"out_dir={tmp_path / 'run'}"])
    with pytest.raises(ConfigError, match=r"model\.gguf: .*no such file"):
        check(cfg)
