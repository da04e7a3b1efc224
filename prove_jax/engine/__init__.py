"""prove_jax.engine: the JAX rollout sampler — KV-cache slots, continuous batching, asyncio host loop.

Typical use (the episode driver in :mod:`prove_jax.env.episode` does this per episode)::

    engine = Engine(model, EngineConfig(slots=16, max_len=4096), stop_ids=special.stop_ids,
                    vocab_limit=special.vocab_size, sampling=SamplingConfig(temperature=1.0))
    async with engine:
        async with engine.session(seed) as sess:
            gen = await sess.generate(transcript.tokens)   # ids, logprobs, sample_logprobs, finish

Modules: ``config`` (SamplingConfig, EngineConfig), ``sampling`` (token selection and the two
log-probs), ``sampler`` (the jitted prefill/decode programs and device state), ``scheduler``
(Engine, Session: continuous batching and host/device overlap).
"""

from prove_jax.engine.config import GREEDY, EngineConfig, SamplingConfig
from prove_jax.engine.sampler import PrefillBatch, Sampler, SlotState, StepOut, compiled_program_count
from prove_jax.engine.sampling import mask_vocab, select
from prove_jax.engine.scheduler import Engine, EngineStats, Generation, Session

__all__ = [
    "GREEDY",
    "Engine",
    "EngineConfig",
    "EngineStats",
    "Generation",
    "PrefillBatch",
    "Sampler",
    "SamplingConfig",
    "Session",
    "SlotState",
    "StepOut",
    "compiled_program_count",
    "mask_vocab",
    "select",
]
