"""PROVE data synthesis (paper §3.2) against our own live MCP servers.

Entry point: ``python -m data.build --out DIR --seed S --size tiny|paper`` (``data.build.build``).

Module map, in pipeline order:

* ``catalog``  — every tool's schema + kit metadata; parameter -> entity-type mapping; name-based
  fallbacks where server metadata is incomplete. Nothing is written per domain.
* ``graph``    — ordered tool pairs classified explicit / implicit / none (programmatic, or ``llm``);
  disk cache keyed by a schema hash; weighted 2–5-tool chain pools.
* ``sampler``  — live-state sampling: discovery on live sessions, typed rows, support filtering,
  read-only probing, compact per-version contexts, chain-aligned entities.
* ``values``   — schema/name-driven argument values (dates, amounts, patterns, ...).
* ``binding`` + ``realise`` — the programmatic teacher executes a chain on live sessions: grounded
  argument binding, retries on blamed arguments, prerequisite insertion, parallel fan-out.
* ``failures`` — designed (unpredictable) failures and recovery: retry / alternative / give up.
* ``intents`` + ``phrases`` + ``render`` + ``speech`` — how people ask per domain (banks, goals, the
  signed-in user, spoken ids), personas, requests naming entities by label, replies from results.
* ``machine``  — the five-state-group state machine producing Example records of all four kinds.
* ``plan``     — deterministic slot plans: exact mix, information levels, coverage-aware chains.
* ``validate`` — replay on fresh sessions, no-op writes, label resolution, provenance of secrets, id
  grounding, Jaccard dedup; ``quality`` — the language figures of card and benchmark.
* ``writer`` + ``card`` — knobs (distractors, enum stripping), splits, JSONL + ArrayRecord, card.
* ``llm`` + ``teacher`` — optional OpenAI-compatible classifier and agent teacher (off by default).

Layering: imports ``servers`` (the kit, in-process) and, of ``prove_jax``, only what imports nothing
of the training side: ``yamlconf`` (the config parser) and ``records`` (the typed Example it writes).
"""
