"""A model family as one object: its architecture and its chat format, registered together.

The two halves live in two registries because the two packages that use them import nothing of
ours (tests/test_repo.py, ``LAYERS``): ``models`` must load a checkpoint without the chat code and
``chat`` must render a conversation without JAX. So

* :class:`~prove_jax.models.config.ModelFamily` (``models``): the ``ModelConfig`` subclass and
  its defaults, the HF ``model_type``/architectures and config keys, the HF <-> JAX tensor table,
  and the *name* of its chat format;
* :class:`~prove_jax.chat.families.ChatFamily` (``chat``): the renderer, the markers that detect
  it, the tiny tokenizer's control tokens/eos/pad and its Jinja template.

The built-in families register their halves where they live (``models/families.py``,
``chat/families.py``), so either package alone knows them. :class:`Family` is the one object
for code outside those packages (a plugin, a test): ``register_family`` adds both halves or
neither, and every consumer — ``ModelConfig.from_hf_dict``, ``save_hf``/``load_hf``,
``FAMILY_CLASSES``, ``get_template``, ``train_tiny_tokenizer``, ``model.json`` — sees it. Only the
process that registered it does: a plugin family must be registered before its checkpoints load.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator
from contextlib import contextmanager

from prove_jax.chat.families import ChatFamily, chat_family, register_chat_family, unregister_chat_family
from prove_jax.models.config import ModelFamily, model_family, register_model_family, unregister_model_family


@dataclasses.dataclass(frozen=True)
class Family:
    """A model family: ``model`` half and, when its chat format is new, the ``chat`` half
    (``None``: ``model.chat_family`` names a format already registered, e.g. ``qwen2.5``)."""

    model: ModelFamily
    chat: ChatFamily | None = None

    @property
    def name(self) -> str:
        return self.model.name

    def __post_init__(self) -> None:
        if self.chat is not None and self.chat.name != self.model.chat_family:
            raise ValueError(f"family {self.name!r} names chat format {self.model.chat_family!r} "
                             f"but brings {self.chat.name!r}")


def register_family(family: Family) -> Family:
    """Register both halves, or neither (a half-registered family would fail far from here)."""
    if family.chat is None:
        chat_family(family.model.chat_family)  # must already exist
    else:
        register_chat_family(family.chat)
    try:
        register_model_family(family.model)
    except Exception:
        if family.chat is not None:
            unregister_chat_family(family.chat.name)
        raise
    return family


def unregister_family(family: Family) -> None:
    """Remove what :func:`register_family` added."""
    unregister_model_family(family.model.name)
    if family.chat is not None:
        unregister_chat_family(family.chat.name)


@contextmanager
def registered(family: Family) -> Iterator[Family]:
    """``family`` registered for the ``with`` block only (tests)."""
    register_family(family)
    try:
        yield family
    finally:
        unregister_family(family)


def get_family(name: str) -> Family:
    """Model family ``name`` with the chat format it names, built-in or registered here."""
    model = model_family(name)
    return Family(model=model, chat=chat_family(model.chat_family))
