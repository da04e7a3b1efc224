"""Reward configuration: the paper's weights and constants, plus the ablation variants.

Defaults are exactly prove_paper.md §3: ``w = (val 0.5, cov 0.5, eff 0.15, name 0.2, arg 0.1)``,
``alpha = beta = 0.5``. YAML loading lives elsewhere; :meth:`RewardConfig.from_dict` takes the
plain dict that loader produces (partial: anything omitted keeps its paper default).

Components are referred to by name and looked up in the registry
(:mod:`prove_jax.rewards.components`), so an ablation is just a different ``components`` tuple:

* ``"paper"``          — the five paper components (default);
* ``"no_val"`` … ``"no_arg"`` — one component removed, the other weights unchanged (the paper's
  ablation rows remove a term; they do not renormalise the rest);
* ``"flat_budget"``    — ``beta = 0``, i.e. budget ``B = n_gt`` (every extra call penalised);
* ``"recall_only"``    — coverage alone, weight 1 (total = R_cov);
* ``"final_state"``    — the paper's five plus our optional final-state term ``state``;
* ``"gdpo"``           — per-component group normalisation before weighting (GDPO-style).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from types import MappingProxyType
from typing import Any

#: The paper's components, in the order its Eq. 5 lists them.
PAPER_COMPONENTS: tuple[str, ...] = ("val", "cov", "eff", "name", "arg")

#: Paper weights, plus the default weight of our final-state term when it is switched on (0.5 —
#: same as R_val / R_cov, because agreeing final state is the strongest task-success signal).
DEFAULT_WEIGHTS: Mapping[str, float] = MappingProxyType(
    {"val": 0.5, "cov": 0.5, "eff": 0.15, "name": 0.2, "arg": 0.1, "state": 0.5}
)


@dataclasses.dataclass(frozen=True)
class RewardConfig:
    """Weights, constants and switches of the PROVE reward.

    Attributes:
        weights: weight per component name (read-only mapping). Components not in ``components``
            are ignored, so a weight may be kept while the component is switched off.
        alpha: efficiency penalty scale in R_eff = -alpha * max(0, N - B) / B.
        beta: budget slack, B = n_gt + ceil(beta * n_gt); 0 gives the "flat budget" ablation.
        components: names (registry keys) summed into ``total``. All paper components are always
            *reported* for logging; only these are weighted into the total.
        group_normalize: GDPO-style: in :func:`~prove_jax.rewards.score_group`, z-score each
            component across the group before weighting and summing (``total_raw`` keeps the
            un-normalised sum). A single :func:`~prove_jax.rewards.score` has no group and
            ignores it.
        norm_eps: added to the group standard deviation in that normalisation.
    """

    weights: Mapping[str, float] = dataclasses.field(default_factory=lambda: DEFAULT_WEIGHTS)
    alpha: float = 0.5
    beta: float = 0.5
    components: tuple[str, ...] = PAPER_COMPONENTS
    group_normalize: bool = False
    norm_eps: float = 1e-6

    def __post_init__(self) -> None:
        # Normalise to immutable containers so a config can be shared between threads/rollouts.
        object.__setattr__(self, "weights", MappingProxyType({str(k): float(v) for k, v in self.weights.items()}))
        object.__setattr__(self, "components", tuple(dict.fromkeys(str(c) for c in self.components)))
        if self.alpha < 0 or self.beta < 0:
            raise ValueError(f"alpha and beta must be >= 0, got alpha={self.alpha} beta={self.beta}")
        if self.norm_eps <= 0:
            raise ValueError(f"norm_eps must be > 0, got {self.norm_eps}")
        missing = [c for c in self.components if c not in self.weights]
        if missing:
            raise ValueError(f"no weight for enabled component(s) {missing}; add them to `weights`")

    def __hash__(self) -> int:
        # The generated hash would fail on the (unhashable) read-only weights mapping; hashing
        # keeps configs usable as cache keys / static arguments.
        return hash((tuple(sorted(self.weights.items())), self.alpha, self.beta, self.components,
                     self.group_normalize, self.norm_eps))

    # ------------------------------------------------------------------ construction helpers
    def replace(self, **changes: Any) -> RewardConfig:
        """A copy with some fields changed (``weights`` given partially are merged)."""
        if "weights" in changes:
            changes["weights"] = {**self.weights, **changes["weights"]}
        return dataclasses.replace(self, **changes)

    @classmethod
    def from_dict(cls, data: Mapping[str, Any] | None) -> RewardConfig:
        """Build from a plain dict (e.g. the ``reward:`` block of a run YAML).

        Keys: ``variant`` (start from a named preset, see :data:`VARIANTS`), ``weights`` (partial
        mapping merged over the defaults), ``alpha``, ``beta``, ``components`` (list of names),
        ``disable`` (names removed from ``components``), ``final_state`` (bool: add/remove the
        ``state`` term), ``group_normalize``, ``norm_eps``. Unknown keys raise ``ValueError`` so
        a typo in a YAML file cannot silently run the wrong ablation.
        """
        data = dict(data or {})
        allowed = {"variant", "weights", "alpha", "beta", "components", "disable", "final_state",
                   "group_normalize", "norm_eps"}
        unknown = sorted(set(data) - allowed)
        if unknown:
            raise ValueError(f"unknown reward config key(s) {unknown}; allowed: {sorted(allowed)}")
        cfg = variant(str(data.pop("variant"))) if "variant" in data else cls()
        changes: dict[str, Any] = {}
        if "weights" in data:
            changes["weights"] = dict(data["weights"] or {})
        for key in ("alpha", "beta", "norm_eps"):
            if key in data:
                changes[key] = float(data[key])
        if "group_normalize" in data:
            changes["group_normalize"] = bool(data["group_normalize"])
        comps = list(data["components"]) if "components" in data else list(cfg.components)
        if "final_state" in data:
            if data["final_state"] and "state" not in comps:
                comps.append("state")
            if not data["final_state"]:
                comps = [c for c in comps if c != "state"]
        drop = set(data.get("disable") or ())
        changes["components"] = tuple(c for c in comps if c not in drop)
        return cfg.replace(**changes)

    @property
    def reads_final_state(self) -> bool:
        """Whether scoring needs the servers' end state (the ``state`` term is switched on): the
        one reason a rollout for training takes snapshots."""
        return "state" in self.components

    @property
    def name(self) -> str:
        """The preset this config equals (:data:`VARIANTS`), else ``"custom"``: what a run log shows."""
        return next((n for n, v in VARIANTS.items() if v == self), "custom")

    def to_dict(self) -> dict[str, Any]:
        """Plain-dict form (round-trips through :meth:`from_dict`), for run logs."""
        return {
            "weights": dict(self.weights),
            "alpha": self.alpha,
            "beta": self.beta,
            "components": list(self.components),
            "group_normalize": self.group_normalize,
            "norm_eps": self.norm_eps,
        }


def _without(name: str) -> RewardConfig:
    return RewardConfig(components=tuple(c for c in PAPER_COMPONENTS if c != name))


#: Named presets for ablations (see the module docstring). Values are immutable configs.
VARIANTS: Mapping[str, RewardConfig] = MappingProxyType(
    {
        "paper": RewardConfig(),
        **{f"no_{c}": _without(c) for c in PAPER_COMPONENTS},
        "flat_budget": RewardConfig(beta=0.0),
        "recall_only": RewardConfig(components=("cov",), weights={**DEFAULT_WEIGHTS, "cov": 1.0}),
        "final_state": RewardConfig(components=(*PAPER_COMPONENTS, "state")),
        "gdpo": RewardConfig(group_normalize=True),
    }
)


def variant(name: str) -> RewardConfig:
    """The preset config called ``name`` (``KeyError`` listing the choices otherwise)."""
    try:
        return VARIANTS[name]
    except KeyError:
        raise KeyError(f"unknown reward variant {name!r}; choose from {sorted(VARIANTS)}") from None
