"""How people ask a maps app for things: addresses, places, directions, saved spots and lists."""

from __future__ import annotations

SELF: tuple[str, ...] = ()
SPOKEN: tuple[str, ...] = ()

BANK: dict[str, dict[str, list[str]]] = {
    "geocode_address": {
        "ask": ["find {address} on the map for me", "where exactly is {address}?",
                "give me the coordinates of {address}", "pin {address} so I can see where it is"],
        "vague": ["I need to find an address", "can you look up where a street address is?"],
    },
    "reverse_geocode_coordinates": {
        "ask": ["what's the street address at {latitude}, {longitude}?",
                "my friend sent me a pin at {latitude}, {longitude} — which address is that?",
                "turn {latitude}, {longitude} into an actual address"],
        "vague": ["I have some GPS coordinates and want to know the address", "what address is this pin?"],
    },
    "search_map_places": {
        "ask": ["find me {query} in {city}", "what are the best-rated {category} spots in {city}?",
                "look for {cuisine} restaurants in {city} that are open right now",
                "show me places matching {query}, highest rated first"],
        "vague": ["I'm looking for somewhere to go", "help me find a good spot in town"],
    },
    "find_nearby_places": {
        "ask": ["what {category} places are within {radius_m} metres of {near}?",
                "is there a {category} close to {near} that's open now?",
                "show me what's around {latitude}, {longitude}",
                "anything near {near} rated {min_rating} or better?"],
        "vague": ["what's around here?", "I need something close by"],
    },
    "get_map_place_details": {
        "ask": ["tell me more about {place_id} — phone, hours, the works",
                "pull up the full info for {place_id}", "what's the address and phone number of {place_id}?"],
        "vague": ["I want details on a place I found", "can you get me the info for that spot?"],
    },
    "check_place_open_status": {
        "ask": ["is {place_id} open right now?", "will {place_id} be open at {at}?",
                "when does {place_id} close tonight?", "I want to go to {place_id} at {at} — will they be open?"],
        "vague": ["is that place still open?", "check if they're open before I head out"],
    },
    "list_map_place_reviews": {
        "ask": ["what are people saying about {place_id}?", "show me the worst reviews of {place_id} first",
                "read me the {min_rating}-star-and-up reviews for {place_id}"],
        "vague": ["are the reviews any good for that place?", "I'd like to see what others thought"],
    },
    "write_map_place_review": {
        "ask": ["leave a {rating}-star review for {place_id} saying \"{text}\"",
                "post my review of {place_id}: {rating} stars, {text}",
                "I want to rate {place_id} {rating} out of 5 — {text}"],
        "vague": ["I want to review a place I went to", "let me leave some feedback on a spot"],
    },
    "get_map_route": {
        "ask": ["how do I get from {origin} to {destination} by {mode}?",
                "give me directions to {destination} from {origin}",
                "how long will it take to {mode} from {origin} to {destination} if I leave at {depart_at}?",
                "route me from {origin} to {destination}"],
        "vague": ["I need directions", "how do I get there?"],
    },
    "compare_route_travel_modes": {
        "ask": ["what's the quickest way to get from {origin} to {destination}?",
                "should I drive, bike, walk or take transit from {origin} to {destination}?",
                "compare my options for getting to {destination} from {origin} at {depart_at}"],
        "vague": ["what's the fastest way to get there?", "is it better to drive or take the train?"],
    },
    "save_map_place": {
        "ask": ["save {place_id} to my places", "bookmark {place_id} as \"{label}\"",
                "keep {place_id} in my saved spots with the note \"{note}\""],
        "vague": ["I want to remember this place", "save that spot for later"],
    },
    "list_saved_map_places": {
        "ask": ["show me the places I've saved in {city}", "what {category} spots do I have saved?",
                "list my saved places, closest to home first"],
        "vague": ["what did I bookmark?", "show my saved stuff"],
    },
    "remove_saved_map_place": {
        "ask": ["take {place_id} off my saved places", "unsave {place_id}", "I don't need {place_id} bookmarked anymore"],
        "vague": ["remove one of my saved places", "clean up my bookmarks"],
    },
    "create_map_place_list": {
        "ask": ["start a new list called \"{name}\"", "make a {visibility} list named {name} for {description}",
                "create a list \"{name}\" I can add spots to"],
        "vague": ["I want to make a list of places", "help me start collecting places for a trip"],
    },
    "add_place_to_map_list": {
        "ask": ["put {place_id} on my list {list_id}", "add {place_id} to {list_id} with a note: {note}",
                "include {place_id} in list {list_id}"],
        "vague": ["add this place to one of my lists", "stick that spot on my list"],
    },
    "get_map_place_lists": {
        "ask": ["what's on my list {list_id}?", "show me all my lists", "open list {list_id} for me"],
        "vague": ["what lists have I made?", "show me my lists"],
    },
}

GOALS: list[dict[str, list[str]]] = [
    {"tools": ["search_map_places", "check_place_open_status", "get_map_route"],
     "ask": ["find a {cuisine} place in {city} that's open now and tell me how to get there from {origin}",
             "I'm hungry — pick a good open {cuisine} restaurant in {city} and route me there"]},
    {"tools": ["geocode_address", "find_nearby_places"],
     "ask": ["what {category} places are near {address}?",
             "I'm staying at {address}; is there a {category} within walking distance?"]},
    {"tools": ["search_map_places", "list_map_place_reviews", "save_map_place"],
     "ask": ["find {query} in {city}, check what people say about it and save it if the reviews are good",
             "look up {query} in {city}, read the reviews and bookmark it for me"]},
    {"tools": ["create_map_place_list", "search_map_places", "add_place_to_map_list"],
     "ask": ["make me a list called {name} and put the top-rated {category} in {city} on it",
             "start a {name} list with a couple of great {category} spots in {city}"]},
    {"tools": ["reverse_geocode_coordinates", "get_map_route"],
     "ask": ["my car is parked at {latitude}, {longitude} — what's the address and how do I walk back there from {origin}?",
             "figure out the address of {latitude}, {longitude} and give me directions to it from {origin}"]},
    {"tools": ["get_map_place_details", "compare_route_travel_modes"],
     "ask": ["tell me about {place_id} and the quickest way to get there from {origin}",
             "what are the hours at {place_id}, and should I drive or take transit from {origin}?"]},
    {"tools": ["list_saved_map_places", "remove_saved_map_place"],
     "ask": ["go through my saved places in {city} and drop {place_id}",
             "check what I've bookmarked and remove {place_id} from it"]},
    {"tools": ["find_nearby_places", "write_map_place_review"],
     "ask": ["find the {category} near {near} I went to and give it {rating} stars: {text}",
             "I was just at a {category} close to {near} — leave it a {rating}-star review saying {text}"]},
]
