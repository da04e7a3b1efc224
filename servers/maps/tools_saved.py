"""Maps personal tools: saved places and named lists of places."""

from __future__ import annotations

from typing import Literal

from servers.kit import Name, Text, ToolError, iso, new_id, now, tool
from servers.kit.geo import haversine_km
from servers.maps.state import (
    MAX_LIST_ENTRIES,
    MAX_LISTS,
    Category,
    ListEntry,
    MapsState,
    PlaceList,
    SavedPlace,
    city_named,
    get_list,
    get_place,
    summary,
)


@tool(consumes=("place_id",), establishes=("place_saved",))
def save_map_place(s: MapsState, place_id: str, label: Name | None = None, note: Text | None = None) -> dict:
    """Save a place to your saved places, optionally under a short label of your own (labels are unique).

    Args:
        place_id: The place's id (PLC-...).
        label: Your own label for it, e.g. "Gym" or "Mum's favourite".
        note: A private note about the place.
    """
    p = get_place(s, place_id)
    existing = s.saved.get(p.place_id)
    if existing is not None:
        raise ToolError(f"{p.name} is already in your saved places (saved {existing.saved_at[:10]}"
                        f"{', label ' + repr(existing.label) if existing.label else ''})", field="place_id",
                        code="duplicate")
    if label is not None:
        clash = next((x for x in s.saved.values() if x.label and x.label.lower() == label.strip().lower()), None)
        if clash is not None:
            raise ToolError(f"label '{label}' is already used for {s.places[clash.place_id].name}; choose another "
                            "label", field="label", code="duplicate")
    saved = s.saved.put(p.place_id, SavedPlace(p.place_id, label.strip() if label else None, note, iso(now(s))))
    return {"saved": saved, "place": summary(s, p), "saved_places": len(s.saved)}


@tool(produces=("place_id",), read_only=True)
def list_saved_map_places(s: MapsState, city: str | None = None, category: Category | None = None,
                          sort_by: Literal["recent", "name", "distance_from_home"] = "recent") -> list:
    """Show the places you saved, with their labels and notes.

    Args:
        city: Only saved places in this city.
        category: Only saved places of this category.
        sort_by: recent (last saved first), name, or distance_from_home.
    """
    in_city = city_named(city) if city is not None else None
    home = s.homes[s.account.get().home_address_id]
    rows = []
    for x in s.saved.values():
        p = s.places[x.place_id]
        if (in_city and p.city != in_city) or (category and p.category != category):
            continue
        km = round(haversine_km(home.latitude, home.longitude, p.latitude, p.longitude), 2)
        rows.append({**summary(s, p), "label": x.label, "note": x.note, "saved_at": x.saved_at,
                     "km_from_home": km})
    key = {"recent": lambda r: (r["saved_at"], r["place_id"]), "name": lambda r: r["name"],
           "distance_from_home": lambda r: r["km_from_home"]}[sort_by]
    rows.sort(key=key, reverse=sort_by == "recent")
    return rows


@tool(consumes=("place_id",), requires=("place_saved",))
def remove_saved_map_place(s: MapsState, place_id: str) -> dict:
    """Remove a place from your saved places (its lists are not affected).

    Args:
        place_id: The saved place's id (PLC-...).
    """
    p = get_place(s, place_id)
    if p.place_id not in s.saved:
        raise ToolError(f"{p.name} is not in your saved places", field="place_id", code="not_found")
    s.saved.delete(p.place_id)
    return {"removed": p.place_id, "name": p.name, "saved_places": len(s.saved)}


@tool(produces=("list_id",), establishes=("map_list_exists",))
def create_map_place_list(s: MapsState, name: Name, description: Text | None = None,
                          visibility: Literal["private", "shared"] = "private") -> dict:
    """Start a new named list of places (for a trip, date ideas, ...). List names are unique; at most 20 lists.

    Args:
        name: Name of the list, e.g. "Lisbon weekend".
        description: What the list is for.
        visibility: private (only you) or shared (anyone with the link).
    """
    clean = name.strip()
    clash = next((x for x in s.lists.values() if x.name.lower() == clean.lower()), None)
    if clash is not None:
        raise ToolError(f"you already have a list named '{clash.name}' ({clash.list_id}); pick another name",
                        field="name", code="duplicate")
    if len(s.lists) >= MAX_LISTS:
        raise ToolError(f"you already have {MAX_LISTS} lists, the maximum; add to an existing list instead",
                        field="name", code="limit")
    lid = new_id(s.counters, "LST")
    pl = s.lists.put(lid, PlaceList(lid, clean, description, visibility, iso(now(s))))
    return {"list_id": pl.list_id, "name": pl.name, "description": pl.description, "visibility": pl.visibility,
            "created_at": pl.created_at, "places": []}


def _list_view(s: MapsState, pl: PlaceList) -> dict:
    return {"list_id": pl.list_id, "name": pl.name, "description": pl.description, "visibility": pl.visibility,
            "created_at": pl.created_at,
            "places": [{**summary(s, s.places[e.place_id]), "note": e.note, "added_at": e.added_at}
                       for e in pl.entries]}


@tool(consumes=("list_id", "place_id"), requires=("map_list_exists",))
def add_place_to_map_list(s: MapsState, list_id: str, place_id: str, note: Text | None = None) -> dict:
    """Add a place to one of your lists (a place appears once per list; at most 50 places a list).

    Args:
        list_id: The list's id (LST-...).
        place_id: The place's id (PLC-...).
        note: Why it is on the list, e.g. "try the brunch".
    """
    pl = get_list(s, list_id)
    p = get_place(s, place_id)
    if any(e.place_id == p.place_id for e in pl.entries):
        raise ToolError(f"{p.name} is already on the list '{pl.name}'", field="place_id", code="duplicate")
    if len(pl.entries) >= MAX_LIST_ENTRIES:
        raise ToolError(f"the list '{pl.name}' is full ({MAX_LIST_ENTRIES} places); start another list",
                        field="list_id", code="limit")
    edited = s.lists.edit(pl.list_id)
    edited.entries.append(ListEntry(p.place_id, note, iso(now(s))))
    return _list_view(s, edited)


@tool(produces=("list_id", "place_id"), read_only=True)
def get_map_place_lists(s: MapsState, list_id: str | None = None) -> dict | list:
    """Show your lists of places: all lists with their sizes, or the places on one list.

    Args:
        list_id: The list to open (LST-...); omit to see every list.
    """
    if list_id is not None:
        return _list_view(s, get_list(s, list_id))
    return [{"list_id": pl.list_id, "name": pl.name, "description": pl.description, "visibility": pl.visibility,
             "place_count": len(pl.entries), "created_at": pl.created_at} for pl in s.lists.values()]
