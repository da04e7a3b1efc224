"""The kit's per-session clock: each successful user call moves it one step, a refused call moves
nothing, the hidden helper moves it further, ``on_time`` runs due work, and replays are identical."""

from __future__ import annotations

import sys
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Annotated

import pytest
from pydantic import Field

from servers.kit import (
    CALL_STEP,
    REFERENCE_DATE,
    Cell,
    Counters,
    Domain,
    DomainRuntime,
    Seeds,
    State,
    Table,
    ToolError,
    discovery,
    iso,
    new_id,
    now,
    require,
    tool,
)


@dataclass
class Parcel:
    parcel_id: str
    status: str  # ordered | shipped | delivered
    due: str  # when it reaches the next status


class ParcelState(State):
    parcels: Table[Parcel]
    counters: Cell[Counters]


def _gen(s: ParcelState, seeds: Seeds) -> None:
    s.counters.set(Counters())


@tool
def order_parcel(s: ParcelState, hours: Annotated[int, Field(ge=1, le=48)]) -> dict:
    """Order a parcel that ships after ``hours`` and arrives as long again after that.

    Args:
        hours: Hours until it ships.
    """
    pid = new_id(s.counters, "PCL")
    return s.parcels.put(pid, Parcel(pid, "ordered", iso(now(s) + timedelta(hours=hours))))


@tool
def cancel_parcel(s: ParcelState, parcel_id: str) -> dict:
    """Cancel a parcel that has not shipped.

    Args:
        parcel_id: Which parcel.
    """
    if require(s.parcels, parcel_id, "parcel_id").status != "ordered":
        raise ToolError("already shipped", field="parcel_id")
    s.parcels.delete(parcel_id)
    return {"cancelled": parcel_id}


@discovery
def parcel_list(s: ParcelState) -> list:
    """Every parcel (hidden)."""
    return [{"parcel_id": p.parcel_id, "status": p.status, "now": iso(now(s))} for p in s.parcels.values()]


def _progress(s: ParcelState, before: datetime, after: datetime) -> None:
    for pid, parcel in list(s.parcels.items()):
        while parcel.status != "delivered" and datetime.fromisoformat(parcel.due) <= after:
            parcel = s.parcels.edit(pid)
            hours = datetime.fromisoformat(parcel.due) - before
            parcel.status = "shipped" if parcel.status == "ordered" else "delivered"
            parcel.due = iso(datetime.fromisoformat(parcel.due) + hours)


parcels = Domain("parcels", ParcelState, _gen, modules=(sys.modules[__name__],), on_time=_progress)


@pytest.fixture
def rt() -> DomainRuntime:
    return DomainRuntime(parcels)


def _now(rt: DomainRuntime, sid: str) -> datetime:
    return datetime.fromisoformat(rt.call("parcels_server_info", {}, sid, 0).json()["now"])


def test_each_user_call_moves_time_one_step_and_nothing_else_does(rt: DomainRuntime) -> None:
    assert _now(rt, "s") == REFERENCE_DATE
    assert not rt.call("order_parcel", {"hours": 2}, "s", 0).is_error
    assert _now(rt, "s") == REFERENCE_DATE + CALL_STEP
    assert rt.call("cancel_parcel", {"parcel_id": "PCL-9999"}, "s", 0).is_error  # refused: no time passes
    assert rt.call("order_parcel", {"hours": 0}, "s", 0).is_error  # schema-invalid: no time passes
    rt.call("parcel_list", {}, "s", 0)  # discovery: sampling the world does not move it
    rt.call("parcels_session_snapshot", {}, "s", 0)
    assert _now(rt, "s") == REFERENCE_DATE + CALL_STEP


def test_advance_helper_runs_due_work_and_reset_rewinds(rt: DomainRuntime) -> None:
    rt.call("order_parcel", {"hours": 2}, "s", 0)
    assert rt.call("parcel_list", {}, "s", 0).json()[0]["status"] == "ordered"
    out = rt.call("parcels_session_advance_clock", {"minutes": 150}, "s", 0).json()
    assert out["now"] == iso(REFERENCE_DATE + CALL_STEP + timedelta(minutes=150))
    assert rt.call("parcel_list", {}, "s", 0).json()[0]["status"] == "shipped"
    assert rt.call("cancel_parcel", {"parcel_id": "PCL-0001"}, "s", 0).is_error
    rt.call("parcels_session_advance_clock", {"minutes": 120}, "s", 0)
    assert rt.call("parcel_list", {}, "s", 0).json()[0]["status"] == "delivered"
    for bad in ({"minutes": -5}, {"minutes": 1.5}, {"minutes": 10**9}, {}, {"hours": 1}):
        assert rt.call("parcels_session_advance_clock", bad, "s", 0).is_error
    rt.call("parcels_session_reset", {}, "s", 0)
    assert _now(rt, "s") == REFERENCE_DATE and rt.call("parcel_list", {}, "s", 0).json() == []


def test_clock_is_per_session_and_left_out_of_snapshots(rt: DomainRuntime) -> None:
    rt.call("parcels_session_advance_clock", {"minutes": 600}, "a", 0)
    assert _now(rt, "b") == REFERENCE_DATE
    assert rt.call("parcels_session_snapshot", {}, "a", 0).text == rt.call("parcels_session_snapshot", {}, "b", 0).text


def test_replaying_the_same_calls_gives_the_same_times_and_states(rt: DomainRuntime) -> None:
    script = [("order_parcel", {"hours": 3}), ("parcels_session_advance_clock", {"minutes": 200}),
              ("order_parcel", {"hours": 1}), ("cancel_parcel", {"parcel_id": "PCL-0002"}),
              ("order_parcel", {"hours": 5}), ("parcels_session_advance_clock", {"minutes": 333})]
    runs = []
    for sid in ("r1", "r2"):
        texts = [rt.call(name, args, sid, 0).text for name, args in script]
        runs.append((texts, rt.call("parcels_session_snapshot", {}, sid, 0).text, _now(rt, sid)))
    assert runs[0] == runs[1]
    assert '"delivered"' in runs[0][1]


def test_a_tool_that_spends_time_runs_the_domains_scheduled_work() -> None:
    """``spend`` inside a tool: the same hook as between calls, the same end state as advancing."""
    from servers.kit.clock import spend

    @tool
    def wait_for_parcels(s: ParcelState, hours: Annotated[int, Field(ge=1, le=48)]) -> dict:
        """Wait a while.

        Args:
            hours: How long.
        """
        before, after = spend(s, timedelta(hours=hours))
        return {"from": iso(before), "to": iso(after)}

    waiting = Domain("parcels", ParcelState, _gen, modules=(sys.modules[__name__],), on_time=_progress)
    waiting._add(wait_for_parcels.__prove_tool__)  # type: ignore[attr-defined]
    rt = DomainRuntime(waiting)
    rt.call("order_parcel", {"hours": 2}, "w", 0)
    assert not rt.call("wait_for_parcels", {"hours": 3}, "w", 0).is_error
    assert rt.call("parcel_list", {}, "w", 0).json()[0]["status"] == "shipped"
