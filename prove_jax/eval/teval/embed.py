"""Sentence embeddings for T-Eval's similarity-scored abilities (plan steps, reasoning thoughts).

T-Eval scores these with cosine similarity of ``sentence-transformers`` embeddings from
``all-mpnet-base-v2`` (English; ``thenlper/gte-large-zh`` for Chinese). Scorers take any object with
``embed(list[str]) -> np.ndarray [n, d]`` so they stay pure and testable with hand-made vectors;
:func:`build_embedder` gives the real one from a local model directory. That one needs ``torch`` and
``transformers``, which this package does not otherwise depend on, so they are imported only when
it is built. Nothing is ever downloaded: the model must already be on disk.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from pathlib import Path
from typing import Any, Protocol

import numpy as np


class Embedder(Protocol):
    """Maps texts to one row each; rows are L2-normalised (scorers normalise again anyway)."""

    def embed(self, texts: list[str]) -> np.ndarray: ...


def embedding_table(embedder: Embedder, texts: Iterable[str]) -> dict[str, np.ndarray]:
    """Embed each distinct text once (a whole file's worth in one call, so the model batches) and
    return unit vectors by text; a zero vector stays zero, so its similarities are 0."""
    uniq = list(dict.fromkeys(texts))
    if not uniq:
        return {}
    vecs = np.asarray(embedder.embed(uniq), dtype=np.float64)
    if vecs.ndim != 2 or vecs.shape[0] != len(uniq):
        raise ValueError(f"embedder returned shape {vecs.shape} for {len(uniq)} texts; expected [n, d]")
    norms = np.linalg.norm(vecs, axis=1, keepdims=True)
    vecs = vecs / np.where(norms > 0, norms, 1.0)
    return dict(zip(uniq, vecs, strict=True))


def cosine_matrix(table: dict[str, np.ndarray], rows: list[str], cols: list[str]) -> np.ndarray:
    """Cosine similarities clipped below at 0, as T-Eval clips them."""
    if not rows or not cols:
        return np.zeros((len(rows), len(cols)))
    a = np.stack([table[t] for t in rows])
    b = np.stack([table[t] for t in cols])
    return np.maximum(a @ b.T, 0.0)


_INSTALL_HINT = ("the T-Eval embedder needs torch and transformers; install them with "
                 "`pip install -e '.[test]'` (the extra that carries them) or `pip install torch transformers`")


class HFEmbedder:
    """A sentence-transformers model read with plain ``transformers``: token embeddings mean-pooled
    over the attention mask (or the first token, if the model's pooling config says CLS), then L2
    normalised. Like sentence-transformers, texts are stripped (and lowercased if the model's
    ``sentence_bert_config.json`` says so) and truncated at its ``max_seq_length``."""

    def __init__(self, path: str | Path, *, device: str = "cpu", batch_size: int = 32) -> None:
        try:
            import torch
            import transformers
        except ImportError as e:
            raise ImportError(_INSTALL_HINT) from e
        self._torch = torch
        root = Path(path)
        self.tokenizer = transformers.AutoTokenizer.from_pretrained(str(root), local_files_only=True)
        self.model = transformers.AutoModel.from_pretrained(str(root), local_files_only=True).to(device).eval()
        self.device, self.batch_size = device, batch_size
        self.pooling = _pooling_mode(root)
        st_path = root / "sentence_bert_config.json"
        st_cfg: dict[str, Any] = json.loads(st_path.read_text()) if st_path.is_file() else {}
        self.lower = bool(st_cfg.get("do_lower_case", False))
        self.max_length = int(st_cfg.get("max_seq_length") or min(int(self.tokenizer.model_max_length), 512))

    def embed(self, texts: list[str]) -> np.ndarray:
        torch = self._torch
        texts = [t.strip().lower() if self.lower else t.strip() for t in texts]  # as sentence-transformers
        out: list[np.ndarray] = []
        with torch.inference_mode():
            for i in range(0, len(texts), self.batch_size):
                enc = self.tokenizer(list(texts[i:i + self.batch_size]), padding=True, truncation=True,
                                     max_length=self.max_length, return_tensors="pt")
                ids, mask = enc["input_ids"].to(self.device), enc["attention_mask"].to(self.device)
                hidden = self.model(input_ids=ids, attention_mask=mask).last_hidden_state.float()
                if self.pooling == "cls":
                    pooled = hidden[:, 0]
                else:
                    m = mask.unsqueeze(-1).to(hidden.dtype)
                    pooled = (hidden * m).sum(1) / m.sum(1).clamp(min=1e-9)
                pooled = torch.nn.functional.normalize(pooled, p=2, dim=1)
                out.append(pooled.cpu().numpy())
        dim = int(self.model.config.hidden_size)
        return np.concatenate(out) if out else np.zeros((0, dim), np.float32)


def _pooling_mode(root: Path) -> str:
    """``mean`` unless the sentence-transformers pooling config asks for CLS; other modes refused."""
    modules = root / "modules.json"
    if not modules.is_file():
        return "mean"
    for mod in json.loads(modules.read_text()):
        if str(mod.get("type", "")).endswith("Pooling"):
            cfg_path = root / mod.get("path", "") / "config.json"
            cfg: dict[str, Any] = json.loads(cfg_path.read_text()) if cfg_path.is_file() else {}
            if cfg.get("pooling_mode_mean_tokens", True):
                return "mean"
            if cfg.get("pooling_mode_cls_token"):
                return "cls"
            raise ValueError(f"{cfg_path}: only mean or CLS pooling is supported")
    return "mean"


def build_embedder(spec: str | Path, *, device: str = "cpu", batch_size: int = 32) -> HFEmbedder:
    """The embedder T-Eval uses, from a local sentence-transformers/HF model directory (for English,
    a copy of ``sentence-transformers/all-mpnet-base-v2``). Never downloads."""
    root = Path(spec).expanduser()
    if not (root / "config.json").is_file():
        raise FileNotFoundError(f"{root} is not a local model directory (no config.json); give the path of a "
                                "downloaded all-mpnet-base-v2 (nothing is fetched)")
    return HFEmbedder(root, device=device, batch_size=batch_size)
