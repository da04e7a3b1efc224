"""Bring your own MCP server: discovery, entity inference, probing, live-state sampling, the graph.

Our twenty servers publish kit metadata (``io.prove/produces`` ...) that synthesis reads; a user's
server publishes only ``tools/list``. This package rebuilds what synthesis needs from that listing
and a live session alone (:mod:`data.byo.protocol` is the whole interface):

* :mod:`~data.byo.discovery` — read-only tools (annotations, else names);
* :mod:`~data.byo.schema` — parameter kinds, entity nouns, example values, argument fills;
* :mod:`~data.byo.extract` — values in results, JSON or text;
* :mod:`~data.byo.probe` — differential tests on the live session: does B accept what A returned
  where a same-shaped unknown value is rejected?;
* :mod:`~data.byo.graph` — producer -> consumer edges from the accepted tests;
* :mod:`~data.byo.sampling` — entities (ids + labels) of the live state, and seeding an empty one;
* :mod:`~data.byo.synth` — the dataset: :mod:`~data.byo.values` (argument slots and the values that
  fill them), :mod:`~data.byo.realise` (chains of successful calls on live sessions),
  :mod:`~data.byo.kinds` (the four kinds), :mod:`~data.byo.phrasing` (text from names and schemas).

Nothing here imports the kit or ``data.catalog``: ``benchmarks/bench_byo_graph.py`` measures the
result against the kit's own edges with the metadata hidden.
"""
