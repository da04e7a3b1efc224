"""Maps smoke scenario: a user looks up their home, finds a place to eat nearby, checks when it is
open, reads and writes a review, gets directions, and organises saved places and lists — succeeding
once with every user-visible tool.

``call(name, args)`` performs a tool call on one session, asserts it did not return an error, and
returns the decoded JSON result.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

Call = Callable[[str, dict[str, Any]], Awaitable[Any]]


async def smoke(call: Call) -> None:
    acct = await call("maps_get_account", {})
    home = acct["home"]
    here = await call("geocode_address", {"address": home["formatted_address"]})
    assert (here["latitude"], here["longitude"]) == (home["latitude"], home["longitude"])
    back = await call("reverse_geocode_coordinates", {"latitude": here["latitude"], "longitude": here["longitude"]})
    assert back["formatted_address"] == home["formatted_address"]

    # somewhere to eat in the home city that the user has neither saved nor reviewed
    found = await call("search_map_places", {"city": home["city"], "category": "restaurant", "sort_by": "rating",
                                             "limit": 20})
    saved = {p["place_id"] for p in acct["saved_places"]}
    reviewed = {r["place_id"] for r in acct["reviews"]}
    place = next(p for p in found["results"] if p["place_id"] not in saved | reviewed)
    pid = place["place_id"]
    nearby = await call("find_nearby_places", {"latitude": here["latitude"], "longitude": here["longitude"],
                                               "radius_m": 8000, "category": "restaurant", "limit": 50})
    assert pid in {p["place_id"] for p in nearby["results"]}
    info = await call("get_map_place_details", {"place_id": pid})
    assert info["saved"] is False
    await call("check_place_open_status", {"place_id": pid, "at": "2026-06-02T19:30"})
    await call("list_map_place_reviews", {"place_id": pid, "sort_by": "highest", "limit": 5})
    await call("write_map_place_review", {"place_id": pid, "rating": 5, "text": "Lovely dinner, friendly staff."})

    # how to get there, and how best to get to work
    route = await call("get_map_route", {"origin": "home", "destination": pid, "mode": "drive"})
    assert route["distance_km"] > 0
    modes = await call("compare_route_travel_modes", {"origin": "home", "destination": "work"})
    assert modes["fastest_mode"] in {"drive", "transit", "bike", "walk"}

    # organise: save it, tidy the saved places, start a list
    await call("save_map_place", {"place_id": pid, "label": "Birthday dinner", "note": "book a table for 6"})
    mine = await call("list_saved_map_places", {"sort_by": "name"})
    assert pid in {p["place_id"] for p in mine}
    await call("remove_saved_map_place", {"place_id": next(p["place_id"] for p in mine if p["place_id"] != pid)})
    new = await call("create_map_place_list", {"name": "Weekend ideas", "description": "Things to try"})
    await call("add_place_to_map_list", {"list_id": new["list_id"], "place_id": pid, "note": "try the tasting menu"})
    shown = await call("get_map_place_lists", {"list_id": new["list_id"]})
    assert [p["place_id"] for p in shown["places"]] == [pid]
