"""Every record of the tiny build, JSONL and ArrayRecord alike, reads into the typed Example and
writes back byte for byte: training and eval read the typed record, data/ writes through it."""

from __future__ import annotations

import json

from grain.sources import ArrayRecordDataSource

from data.build import BuildResult
from data.writer import SPLITS, dumps, shard_paths
from prove_jax.records import Example


def test_every_record_of_the_tiny_build_round_trips_byte_identically(tiny: BuildResult) -> None:
    n = 0
    for split in SPLITS:
        lines = (tiny.out / f"{split}.jsonl").read_text(encoding="utf-8").splitlines()
        source = ArrayRecordDataSource(shard_paths(tiny.out, split))  # what prove_jax.loaders reads
        assert [source[i].decode("utf-8") for i in range(len(source))] == lines
        for line in lines:
            ex = Example.from_dict(json.loads(line))
            assert dumps(ex.to_dict()) == line, ex.id
            n += 1
    assert n == tiny.stats["total"] > 0
