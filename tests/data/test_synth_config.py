"""``SynthConfig``'s own checks: sizes that cannot be built are refused when the config is made."""

from __future__ import annotations

import pytest

from data.config import SynthConfig, preset


def test_an_irrelevance_rate_past_its_bucket_is_refused_naming_the_knob() -> None:
    # 0.5 of 20 examples is 10 irrelevance examples, carved from a bucket of 4: abstention would be -6
    with pytest.raises(ValueError, match="irrelevance_rate"):
        SynthConfig(n_conversation=12, n_clarification=4, n_abstention_irrelevance=4, irrelevance_rate=0.5)


def test_the_bucket_filled_exactly_by_irrelevance_is_allowed() -> None:
    cfg = SynthConfig(n_conversation=12, n_clarification=4, n_abstention_irrelevance=4, irrelevance_rate=0.2)
    assert (cfg.n_irrelevance, cfg.n_abstention) == (4, 0)
    assert all(v >= 0 for v in cfg.targets().values())


@pytest.mark.parametrize("size", ["tiny", "paper"])
def test_the_presets_have_non_negative_targets(size: str) -> None:
    assert min(preset(size).targets().values()) >= 0
