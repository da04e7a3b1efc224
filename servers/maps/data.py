"""Static name lists for the maps world: streets per country, business names per category, cuisines,
opening-hour templates and review phrases. Plain data, no logic."""

from __future__ import annotations

CONTINENT: dict[str, str] = {
    "US": "North America", "CA": "North America", "GB": "Europe", "FR": "Europe", "DE": "Europe",
    "JP": "Asia", "AU": "Oceania",
}
COUNTRY_ALIASES: dict[str, tuple[str, ...]] = {
    "US": ("us", "usa", "united", "states", "america"), "CA": ("ca", "canada"),
    "GB": ("uk", "gb", "united", "kingdom", "england", "britain"), "FR": ("fr", "france"),
    "DE": ("de", "germany", "deutschland"), "JP": ("jp", "japan"), "AU": ("au", "australia"),
}

US_STREETS = (
    "Main Street", "Oak Street", "Maple Avenue", "Cedar Street", "Elm Street", "Pine Street",
    "Washington Street", "Park Avenue", "Lake Street", "Church Street", "Market Street", "Spring Street",
    "Union Street", "Franklin Avenue", "Harbor Drive", "River Road", "Grove Street", "Willow Lane",
    "Chestnut Street", "Walnut Street", "Highland Avenue", "Jefferson Street", "Madison Avenue",
    "Central Avenue", "Summit Avenue", "Sunset Boulevard", "Lincoln Avenue", "Mill Street",
)
STREETS: dict[str, tuple[str, ...]] = {
    "US": US_STREETS,
    "CA": ("Queen Street West", "King Street West", "Yonge Street", "Bloor Street West", "Dundas Street West",
           "Spadina Avenue", "College Street", "Ossington Avenue", "Danforth Avenue", "Front Street East",
           "Bathurst Street", "Church Street", "Harbord Street", "Parliament Street", "Roncesvalles Avenue"),
    "GB": ("High Street", "Station Road", "Church Lane", "Victoria Road", "King Street", "Queen Street",
           "Mill Lane", "Park Road", "Baker Street", "Marylebone Lane", "Brick Lane", "Camden Road",
           "Upper Street", "Kensington Church Street", "Portobello Road", "Borough High Street"),
    "FR": ("Rue de Rivoli", "Rue du Bac", "Rue Oberkampf", "Boulevard Saint-Germain", "Avenue de l'Opera",
           "Rue de la Roquette", "Rue Montorgueil", "Rue des Martyrs", "Rue Cler", "Boulevard Voltaire",
           "Rue de Charonne", "Avenue Parmentier", "Rue Saint-Antoine", "Rue de Bretagne", "Quai de Valmy",
           "Rue Lepic"),
    "DE": ("Friedrichstraße", "Torstraße", "Kastanienallee", "Oranienstraße", "Karl-Marx-Allee",
           "Kurfürstendamm", "Schönhauser Allee", "Bergmannstraße", "Kantstraße", "Invalidenstraße",
           "Warschauer Straße", "Sonnenallee", "Boxhagener Straße", "Greifswalder Straße", "Potsdamer Straße"),
    "JP": ("Jingumae", "Ebisu", "Roppongi", "Ginza", "Asakusa", "Nakameguro", "Kitazawa", "Akasaka",
           "Kagurazaka", "Ueno", "Daikanyama", "Nihonbashi", "Shibuya", "Shinjuku", "Azabu-Juban"),
    "AU": ("George Street", "Pitt Street", "Elizabeth Street", "King Street", "Oxford Street", "Crown Street",
           "Macquarie Street", "Bourke Street", "Victoria Road", "Military Road", "Glebe Point Road",
           "Darling Street", "Campbell Parade", "Bay Street", "Harris Street"),
}

DIAL: dict[str, str] = {
    "New York": "+1 212-555-", "Boston": "+1 617-555-", "Chicago": "+1 312-555-", "Austin": "+1 512-555-",
    "Denver": "+1 303-555-", "Seattle": "+1 206-555-", "San Francisco": "+1 415-555-",
    "Los Angeles": "+1 213-555-", "Miami": "+1 305-555-", "Atlanta": "+1 404-555-", "Toronto": "+1 416-555-",
    "London": "+44 20 7946 ", "Paris": "+33 1 42 ", "Berlin": "+49 30 2345 ", "Tokyo": "+81 3-5555-",
    "Sydney": "+61 2 9555 ",
}

# Per city: how many places of each category (22 per city).
CATEGORY_PLAN: tuple[tuple[str, int], ...] = (
    ("restaurant", 7), ("cafe", 2), ("bakery", 1), ("bar", 1), ("pharmacy", 2), ("fuel_station", 1),
    ("ev_charging", 1), ("hotel", 2), ("museum", 2), ("supermarket", 2), ("park", 1),
)
CATEGORIES: tuple[str, ...] = tuple(c for c, _ in CATEGORY_PLAN)

CUISINES: dict[str, tuple[tuple[str, ...], tuple[str, ...]]] = {
    # cuisine: (name prefixes, name suffixes)
    "italian": (("Trattoria", "Osteria", "Bella", "Nonna's", "Piccolo", "Casa"), ("Roma", "Verde", "Kitchen", "Lucia", "Toscana")),
    "pizza": (("Brick Oven", "Slice of", "Napoli", "Crust &", "Big Tony's"), ("Pizza", "Pizzeria", "Pie Co.", "Flame")),
    "japanese": (("Sakura", "Hinode", "Kaze", "Umami", "Tsuki", "Yuzu"), ("Sushi", "Ramen", "Izakaya", "Sushi Bar")),
    "chinese": (("Golden Dragon", "Jade Garden", "Lucky Panda", "Red Lantern", "Bamboo House"), ("Kitchen", "Noodle House", "Dim Sum", "Express")),
    "mexican": (("La Cocina", "El Sol", "Casa Azul", "Los Amigos", "La Palma"), ("Taqueria", "Cantina", "Mexican Grill")),
    "indian": (("Taj", "Spice Route", "Bombay", "Masala", "Saffron"), ("Palace", "Kitchen", "House", "Tandoor")),
    "thai": (("Bangkok", "Thai Orchid", "Lotus", "Siam", "Chili"), ("Kitchen", "Garden", "Street Food", "Basil")),
    "american": (("Burger Barn", "Smokehouse", "Liberty", "Route 66", "Blue Plate"), ("Grill", "Diner", "BBQ", "Burgers")),
    "mediterranean": (("Olive Tree", "Aegean", "Cedar", "Pita", "Zaytoon"), ("Taverna", "Grill", "Kitchen", "Mezze")),
    "korean": (("Seoul", "Kimchi", "Hanok", "Bibim"), ("BBQ", "Kitchen", "House", "Table")),
    "vietnamese": (("Pho", "Saigon", "Little Hanoi", "Lemongrass"), ("House", "Kitchen", "Corner", "Bistro")),
    "vegan": (("Green", "Sprout", "Leaf &", "Rooted"), ("Bowl", "Kitchen", "Table", "Garden")),
}

LOCAL_CUISINES: dict[str, tuple[str, ...]] = {
    "US": ("american", "pizza", "mexican"), "CA": ("american", "pizza", "korean"), "GB": ("indian", "italian"),
    "FR": ("italian", "mediterranean", "vietnamese"), "DE": ("mediterranean", "vietnamese", "italian"),
    "JP": ("japanese", "korean", "chinese"), "AU": ("thai", "vietnamese", "italian"),
}

NAMES: dict[str, tuple[str, ...]] = {
    "cafe": ("Bean There Coffee", "Daily Grind", "Copper Kettle Cafe", "Morning Ritual", "The Roastery",
             "Little Fox Coffee", "Steam & Crema", "Blue Door Cafe", "Common Ground Coffee"),
    "bakery": ("Golden Crust Bakery", "Flour & Co", "Rise Bakery", "Le Petit Four", "Butter & Rye"),
    "bar": ("The Tipsy Fox", "Hop House", "The Copper Still", "Night Owl Bar", "The Velvet Lounge"),
    "pharmacy": ("HealthPlus Pharmacy", "CareWell Pharmacy", "City Drugs", "MediMart", "Corner Apothecary"),
    "fuel_station": ("QuickFuel", "Petro Express", "Fuel Stop", "GreenLeaf Gas"),
    "ev_charging": ("VoltUp Charging Hub", "ChargeNow Station", "PlugPoint Fast Charge"),
    "hotel": ("Grand {city} Hotel", "Harbor View Hotel", "Parkside Suites", "The Meridian", "Nomad Hotel {city}",
              "The Wren Hotel"),
    "museum": ("{city} Museum of Art", "Museum of Natural History", "{city} History Museum", "Modern Art Gallery",
               "Science Center", "Museum of Design"),
    "supermarket": ("FreshMart", "GreenGrocer Market", "Daily Basket", "Corner Foods", "Harvest Market"),
    "park": ("{city} Botanical Garden", "Riverside Park", "Memorial Park", "Victoria Gardens", "Central Green"),
}

# Opening-hour templates, per category: (weight, {day: [intervals]}) with day keys mon..sun.
WEEK = ("mon", "tue", "wed", "thu", "fri", "sat", "sun")


def _every(interval: str, **override: list[str]) -> dict[str, list[str]]:
    return {d: list(override.get(d, [interval])) for d in WEEK}


ALWAYS = "00:00-24:00"
HOURS: dict[str, tuple[dict[str, list[str]], ...]] = {
    "restaurant": (
        _every("11:00-22:00"),
        _every("12:00-23:00", mon=[]),
        _every("17:00-23:00", sun=[]),
        _every("07:00-15:00"),
        _every("11:30-22:30", fri=["11:30-02:00"], sat=["11:30-02:00"]),
        _every("11:00-15:00", tue=["11:00-15:00", "17:30-22:00"], wed=["11:00-15:00", "17:30-22:00"],
               thu=["11:00-15:00", "17:30-22:00"], fri=["11:00-15:00", "17:30-23:00"], sat=["17:30-23:00"], mon=[]),
    ),
    "cafe": (_every("07:00-18:00", sat=["08:00-17:00"], sun=["08:00-17:00"]), _every("06:30-19:00")),
    "bakery": (_every("06:00-14:00", mon=[]), _every("07:00-16:00")),
    "bar": (_every("16:00-01:00", fri=["14:00-02:00"], sat=["14:00-02:00"]), _every("17:00-00:00", mon=[])),
    "pharmacy": (_every("08:00-21:00", sun=["10:00-18:00"]), _every(ALWAYS)),
    "fuel_station": (_every(ALWAYS),),
    "ev_charging": (_every(ALWAYS),),
    "hotel": (_every(ALWAYS),),
    "museum": (_every("10:00-18:00", mon=[], thu=["10:00-21:00"]), _every("09:30-17:30", tue=[])),
    "supermarket": (_every("07:00-22:00"), _every("08:00-21:00", sun=["09:00-18:00"])),
    "park": (_every("06:00-22:00"),),
}
ALL_DAY_RESTAURANT = _every(ALWAYS)

TAGS: dict[str, tuple[str, ...]] = {
    "restaurant": ("outdoor_seating", "takeout", "delivery", "wheelchair_accessible", "reservations", "vegetarian_options"),
    "cafe": ("wifi", "outdoor_seating", "takeout", "wheelchair_accessible"),
    "bakery": ("takeout", "gluten_free_options"),
    "bar": ("outdoor_seating", "live_music", "happy_hour"),
    "pharmacy": ("drive_through", "wheelchair_accessible"),
    "fuel_station": ("car_wash", "convenience_store", "air_pump"),
    "ev_charging": ("fast_charging", "24_hours"),
    "hotel": ("wifi", "parking", "pool", "gym", "wheelchair_accessible"),
    "museum": ("wheelchair_accessible", "guided_tours", "gift_shop"),
    "supermarket": ("parking", "organic", "delivery"),
    "park": ("dog_friendly", "playground", "restrooms"),
}

REVIEW_OPENERS = ("Great spot", "Really enjoyed it", "Solid choice", "A bit disappointing", "Loved it",
                  "Decent but pricey", "Would come back", "Not what I expected", "Hidden gem", "Nice atmosphere")
REVIEW_DETAILS = ("the staff were friendly", "service was slow on a busy night", "easy to find",
                  "it was very clean", "prices are fair", "it gets crowded at lunch", "parking is tricky",
                  "the location is convenient", "quiet in the mornings", "worth the wait")
