"""``model.json``: what a checkpoint or export directory needs to describe its own model.

A training checkpoint used to carry only the launch config that produced it, so export and serve
had to rebuild the launcher's whole run to find the architecture, and a run started from
``model.hf_dir`` could only be exported while that HF directory still sat at its old path. Now
every ``<stage>/checkpoints/`` directory and every export directory holds

* ``model.json`` — a :class:`ModelRecord`: the full :class:`~prove_jax.models.ModelConfig`
  (family, vocabulary, dtypes, runtime options), the chat family its transcripts were rendered
  with, the special-token ids the engine stops on (checked against the tokenizer when loaded, so
  a swapped tokenizer fails loudly instead of corrupting turns), the training mesh and where the
  weights came from;
* the tokenizer and HF side files (``tokenizer.json``, ``tokenizer_config.json``, chat template,
  generation config and the source ``config.json`` whose extra keys an export keeps), copied into
  ``checkpoints/tokenizer/`` (an export keeps them beside its weights, as transformers expects).

:class:`ModelSpec` is the other half: how a launch config's ``model``/``tokenizer`` sections map to
a ModelConfig, chat family and tokenizer directory. The launcher's run context and the loader of
checkpoints written before ``model.json`` existed (launch-config metadata only) share it, so the
two can never disagree about what a launch config means.
"""

from __future__ import annotations

import dataclasses
import math
import shutil
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import jax

from prove_jax.chat import ChatTemplate, ChatTokenizer, SpecialIds, detect_family, get_template, special_ids
from prove_jax.io_util import read_json, write_json
from prove_jax.models.config import FAMILY_CLASSES, ModelConfig, model_family
from prove_jax.models.lora import LoraConfig
from prove_jax.yamlconf import RELATIVE

RECORD_FILE = "model.json"
TOKENIZER_SUBDIR = "tokenizer"
"""Where a checkpoint directory keeps its copied tokenizer files (beside Orbax's step dirs)."""
RECORD_FORMAT = 1
VOCAB_MULTIPLE = 64
"""Random-init embedding tables are padded like real checkpoints' (rows beyond the tokenizer are
never sampled: the engine masks ids ``>= len(tokenizer)``)."""

_WEIGHT_SUFFIXES = (".safetensors", ".bin", ".pt", ".pth", ".msgpack", ".h5", ".ckpt", ".gguf")


class ModelRecordError(ValueError):
    """A ``model.json`` that cannot be used: unknown format, missing files, mismatched tokenizer."""


# ---- ModelConfig <-> JSON ---------------------------------------------------------------------------
def config_to_json(config: ModelConfig) -> dict[str, Any]:
    """Every field of ``config`` as JSON values (tuples become lists)."""
    out: dict[str, Any] = {}
    for f in dataclasses.fields(config):
        value = getattr(config, f.name)
        if f.name == "sharding_rules":
            value = [[name, list(axes) if isinstance(axes, tuple) else axes] for name, axes in value]
        elif isinstance(value, tuple):
            value = list(value)
        out[f.name] = value
    return out


def config_from_json(data: Mapping[str, Any]) -> ModelConfig:
    """The ModelConfig :func:`config_to_json` wrote (its family's class, so ``==`` holds)."""
    known = {f.name for f in dataclasses.fields(ModelConfig)}
    unknown = sorted(set(data) - known)
    if unknown:
        raise ModelRecordError(f"model config has fields this version does not know: {unknown}")
    fields = dict(data)
    if isinstance(fields.get("eos_token_id"), list):
        fields["eos_token_id"] = tuple(fields["eos_token_id"])
    if "sharding_rules" in fields:
        fields["sharding_rules"] = tuple(
            (str(name), tuple(axes) if isinstance(axes, list) else axes) for name, axes in fields["sharding_rules"])
    family = fields.pop("family")
    if family not in FAMILY_CLASSES:
        raise ModelRecordError(f"unknown model family {family!r}; supported: {sorted(FAMILY_CLASSES)}")
    return FAMILY_CLASSES[family](**fields)


def lora_to_json(cfg: LoraConfig) -> dict[str, Any]:
    out = dataclasses.asdict(cfg)
    out["targets"] = cfg.targets if isinstance(cfg.targets, str) else list(cfg.targets)
    return out


# ---- the record --------------------------------------------------------------------------------------
@dataclasses.dataclass(frozen=True)
class ModelRecord:
    """A model directory's self-description (``model.json``); see the module docstring."""

    config: ModelConfig
    chat_family: str
    """The chat template transcripts were rendered with (a registered chat family: ``qwen3``, ...)."""
    special: SpecialIds
    """Control-token ids of that template in the directory's tokenizer (verified on load)."""
    train_mesh: str = ""
    """The mesh spec the params were trained on: a checkpoint restores onto it by default."""
    origin: str = ""
    """Where the weights started (``hf:<dir>`` or ``init:<family> seed=<n>``): provenance only."""
    tokenizer_dir: str = "."
    """The tokenizer files' folder, relative to the directory holding ``model.json``."""
    tokenizer_files: tuple[str, ...] = ()
    lora: LoraConfig | None = None
    """A checkpoint of LoRA training: the adapters' settings. Its params are the adapters; the
    frozen base they sit on is the HF directory ``base_dir`` (before any QLoRA quantisation,
    which is deterministic and redone on load)."""
    base_dir: str = ""
    """With ``lora``: the base's HF directory, relative to the directory holding ``model.json``."""

    def template(self, *, enable_thinking: bool = False) -> ChatTemplate:
        """The chat template (thinking off, as in training, unless asked)."""
        return get_template(self.chat_family, enable_thinking=enable_thinking)

    def to_json(self) -> dict[str, Any]:
        return {"format": RECORD_FORMAT, "model": config_to_json(self.config), "chat_family": self.chat_family,
                "special_ids": {**dataclasses.asdict(self.special), "stop_ids": list(self.special.stop_ids)},
                "train_mesh": self.train_mesh, "origin": self.origin, "tokenizer_dir": self.tokenizer_dir,
                "tokenizer_files": list(self.tokenizer_files),
                **({"lora": lora_to_json(self.lora), "base_dir": self.base_dir} if self.lora else {})}

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> ModelRecord:
        if data.get("format") != RECORD_FORMAT:
            raise ModelRecordError(f"{RECORD_FILE} format {data.get('format')!r} is not {RECORD_FORMAT}")
        try:
            sp = dict(data["special_ids"])
            special = SpecialIds(**{**sp, "stop_ids": tuple(sp["stop_ids"])})
            return cls(config=config_from_json(data["model"]), chat_family=str(data["chat_family"]), special=special,
                       train_mesh=str(data.get("train_mesh", "")), origin=str(data.get("origin", "")),
                       tokenizer_dir=str(data.get("tokenizer_dir", ".")),
                       tokenizer_files=tuple(data.get("tokenizer_files", ())),
                       lora=LoraConfig(**data["lora"]) if data.get("lora") else None,
                       base_dir=str(data.get("base_dir", "")))
        except ModelRecordError:
            raise
        except (KeyError, TypeError, ValueError) as exc:
            raise ModelRecordError(f"{RECORD_FILE} is incomplete: {exc!r}") from None


def describe(config: ModelConfig, template: ChatTemplate, tokenizer: ChatTokenizer, *, train_mesh: str = "",
             origin: str = "") -> ModelRecord:
    """The record of a model rendered with ``template`` over ``tokenizer`` (files added on write)."""
    return ModelRecord(config=config, chat_family=template.family, special=special_ids(template, tokenizer),
                       train_mesh=train_mesh, origin=origin)


def side_files(directory: Path) -> list[Path]:
    """The files of an HF-style directory besides weights: tokenizer, chat template, generation and
    base ``config.json`` (what ``save_hf`` copies from its source), never ``model.json`` itself."""
    return sorted(p for p in directory.iterdir()
                  if p.is_file() and p.suffix not in _WEIGHT_SUFFIXES and not p.name.endswith((".index.json", ".tmp"))
                  and p.name != RECORD_FILE)


def write_record(directory: str | Path, record: ModelRecord, *, copy_tokenizer_from: str | Path | None = None
                 ) -> ModelRecord:
    """Write ``record`` as ``directory/model.json`` (process 0; the others return the same record).

    ``copy_tokenizer_from``: copy that directory's side files into ``directory/tokenizer/`` first
    (a checkpoint: the run's tokenizer, or the HF directory training started from, may move or
    vanish later). Without it the side files already beside ``model.json`` are listed (an export,
    where ``save_hf`` put them). ``model.json`` is written last and atomically, so its presence
    means the files it names are complete."""
    directory = Path(directory)
    if copy_tokenizer_from is not None:
        source = Path(copy_tokenizer_from)
        files = side_files(source)
        if not any(f.name == "tokenizer.json" for f in files):
            raise ModelRecordError(f"{source} has no tokenizer.json to copy beside the checkpoint")
        record = dataclasses.replace(record, tokenizer_dir=TOKENIZER_SUBDIR, tokenizer_files=tuple(f.name for f in files))
        if jax.process_index() == 0:
            target = directory / TOKENIZER_SUBDIR
            target.mkdir(parents=True, exist_ok=True)
            for f in files:
                if not (target / f.name).exists() or (target / f.name).read_bytes() != f.read_bytes():
                    shutil.copy2(f, target / f.name)
    else:
        files = side_files(directory) if jax.process_index() == 0 else []  # only process 0 wrote them
        record = dataclasses.replace(record, tokenizer_dir=".", tokenizer_files=tuple(f.name for f in files))
    write_json(directory / RECORD_FILE, record.to_json())
    return record


def read_record(directory: str | Path) -> ModelRecord | None:
    """``directory``'s record, or None when it has no ``model.json`` (an HF directory from
    elsewhere, or a checkpoint written before records existed)."""
    path = Path(directory) / RECORD_FILE
    if not path.is_file():
        return None
    record = ModelRecord.from_json(read_json(path))
    missing = [f for f in record.tokenizer_files if not (Path(directory) / record.tokenizer_dir / f).is_file()]
    if missing:
        raise ModelRecordError(f"{path} names tokenizer files that are not there: {missing}")
    return record


def open_tokenizer(directory: str | Path, record: ModelRecord) -> tuple[ChatTokenizer, Path]:
    """The record's tokenizer and its folder, after checking that its control tokens still have
    the ids the model was trained with."""
    folder = Path(directory) / record.tokenizer_dir
    tokenizer = ChatTokenizer.from_dir(folder)
    try:
        now = special_ids(record.template(), tokenizer)
    except KeyError as exc:
        raise ModelRecordError(f"the tokenizer in {folder} lacks a {record.chat_family} control token: {exc}") from None
    if now != record.special:
        raise ModelRecordError(f"the tokenizer in {folder} gives special ids {now}, but the model was trained "
                               f"with {record.special}")
    return tokenizer, folder


def default_chat_family(family: str) -> str:
    """The chat template of model ``family`` when no tokenizer says otherwise (a tiny BPE of
    ours): the ``chat_family`` its registration names."""
    return model_family(family).chat_family


# ---- what a launch config's model section means -------------------------------------------------------
@dataclasses.dataclass(frozen=True)
class ModelSpec:
    """A launch's ``model:`` section: an HF checkpoint (``hf_dir``) or a seeded random init of
    ``init`` (ModelConfig fields) over the run's tokenizer, with the runtime options training uses."""

    family: str = "qwen3"  # a registered model family = HF model_type (qwen2 | qwen3 | granite | llama built in)
    hf_dir: str = dataclasses.field(default="", metadata=RELATIVE)  # in a YAML: relative to the file
    # a GGUF instead of an HF directory: a path, or package:DIST/FILE (a file inside an installed wheel);
    # the launcher converts it into hf_dir (default <out_dir>/model_hf) before any stage runs
    gguf: str = dataclasses.field(default="", metadata=RELATIVE)
    init: Mapping[str, Any] = dataclasses.field(default_factory=dict)
    dtype: str = "float32"  # compute dtype; "bfloat16" with param_dtype "float32" = bf16 with f32 master
    param_dtype: str = "float32"
    remat: str = "none"  # none | full | dots
    scan_layers: bool = False
    # attention without a KV cache (SFT/GRPO loss, reference log-probs): null = auto (splash on
    # TPU, cudnn on GPU, head_major on CPU) | splash | cudnn | xla | head_major (models.attention)
    attention_impl: str | None = None
    mesh: str = ""  # e.g. "fsdp=4,tensor=2"; empty: one device
    seed: int = 0

    @classmethod
    def from_stored(cls, stored: Mapping[str, Any]) -> tuple[ModelSpec, str]:
        """The model section and ``tokenizer.dir`` a checkpoint's metadata stored (``to_dict`` of the
        LaunchConfig; keys added to the model section later default as the section does)."""
        m, t = stored["model"], stored.get("tokenizer") or {}
        spec = cls(family=str(m["family"]), hf_dir=str(m.get("hf_dir") or ""), gguf=str(m.get("gguf") or ""), init=dict(m.get("init") or {}),
                   dtype=str(m["dtype"]), param_dtype=str(m["param_dtype"]), remat=str(m.get("remat", "none")),
                   scan_layers=bool(m.get("scan_layers", False)), attention_impl=m.get("attention_impl"),
                   mesh=str(m.get("mesh") or ""), seed=int(m.get("seed", 0)))
        return spec, str(t.get("dir") or "")

    def tokenizer_path(self, run_dir: Path, tokenizer_dir: str = "") -> Path:
        """``tokenizer_dir`` (the launch's ``tokenizer.dir``), else the HF checkpoint's own, else the
        tiny BPE the run trained."""
        if tokenizer_dir:
            return Path(tokenizer_dir)
        if self.hf_dir:
            return Path(self.hf_dir)
        return run_dir / "tokenizer"

    def chat_family(self, tokenizer: Callable[[], ChatTokenizer], tokenizer_dir: str = "") -> str:
        """A real tokenizer says its family (chat template, added tokens); a tiny BPE speaks the
        chat format ``family`` registered (:func:`default_chat_family`)."""
        if tokenizer_dir or self.hf_dir:
            tok = tokenizer()
            return detect_family(tok.chat_template, tok.added_tokens)
        return default_chat_family(self.family)

    def model_config(self, tokenizer: Callable[[], Any]) -> ModelConfig:
        """The architecture: ``hf_dir``'s config.json, or ``init`` with the run tokenizer's
        vocabulary (padded to :data:`VOCAB_MULTIPLE`); ``tokenizer`` is called only then."""
        runtime: dict[str, Any] = {"dtype": self.dtype, "param_dtype": self.param_dtype, "remat": self.remat,
                                   "scan_layers": self.scan_layers, "attention_impl": self.attention_impl}
        if self.hf_dir:
            return ModelConfig.from_hf_dir(self.hf_dir, **runtime)
        tok = tokenizer()
        vocab = math.ceil(len(tok) / VOCAB_MULTIPLE) * VOCAB_MULTIPLE
        init: dict[str, Any] = {"initializer_range": 0.02, "tie_word_embeddings": False, **self.init}
        init.pop("vocab_size", None)  # a random init uses the run's tokenizer (init's is the checkpoint's)
        return FAMILY_CLASSES[self.family](vocab_size=vocab, eos_token_id=tok.eos_id, pad_token_id=tok.pad_id,
                                           **init, **runtime)

    @property
    def origin(self) -> str:
        return f"hf:{Path(self.hf_dir).resolve()}" if self.hf_dir else f"init:{self.family} seed={self.seed}"
