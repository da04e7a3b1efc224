"""T-Eval (open-compass/T-Eval, Apache-2.0): tool-use abilities scored step by step.

Our own implementation of the official scoring rules for its six abilities (instruct, plan,
reason, retrieve, understand, review), reading the official data files from a directory the user
gives and querying any :class:`~prove_jax.serve.protocol.ChatClient` in T-Eval's prompt formats.
``python -m prove_jax.eval teval --data DIR --embedder MODEL_DIR ...`` runs it from the command line.
"""

from prove_jax.eval.teval.data import (
    FILES,
    FileSpec,
    Sample,
    TevalDataError,
    TevalFile,
    chat_messages,
    clean_prediction,
    load_teval,
    parse_file,
)
from prove_jax.eval.teval.embed import Embedder, HFEmbedder, build_embedder
from prove_jax.eval.teval.runner import TevalConfig, run_teval, score_all
from prove_jax.eval.teval.scorers import (
    score_file,
    score_instruct,
    score_plan,
    score_review,
    score_rru,
    summarize,
)

__all__ = [
    "FILES",
    "Embedder",
    "FileSpec",
    "HFEmbedder",
    "Sample",
    "TevalConfig",
    "TevalDataError",
    "TevalFile",
    "build_embedder",
    "chat_messages",
    "clean_prediction",
    "load_teval",
    "parse_file",
    "run_teval",
    "score_all",
    "score_file",
    "score_instruct",
    "score_plan",
    "score_review",
    "score_rru",
    "summarize",
]
