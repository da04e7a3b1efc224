"""Fixed name lists for the retail chain world (catalog templates, neighbourhoods, suppliers)."""

from __future__ import annotations

CHAIN = "Brightmart"

# name, category, brand, USD list price low/high
CATALOG: tuple[tuple[str, str, str, int, int], ...] = (
    ("Wireless Noise-Cancelling Headphones", "Electronics", "Sonora", 149, 299),
    ("Bluetooth Speaker Mini", "Electronics", "Sonora", 39, 79),
    ("4K Streaming Stick", "Electronics", "Vistacast", 39, 59),
    ("Smart Watch Series 5", "Electronics", "Pulsetime", 199, 349),
    ("Gaming Console X", "Electronics", "Nexplay", 449, 499),
    ("USB-C Fast Charger 65W", "Electronics", "Voltix", 29, 49),
    ("Portable Power Bank 20000mAh", "Electronics", "Voltix", 35, 59),
    ("E-Reader Paperlight", "Electronics", "Inkwell", 109, 149),
    ("Robot Vacuum R7", "Home", "Tidybot", 249, 399),
    ("Air Purifier HEPA 300", "Home", "Breezewell", 129, 199),
    ("Memory Foam Pillow (2-pack)", "Home", "Cloudrest", 39, 59),
    ("Cotton Bath Towel Set", "Home", "Loomhouse", 29, 49),
    ("LED Desk Lamp", "Home", "Lumina", 25, 45),
    ("Weighted Blanket 15 lb", "Home", "Cloudrest", 69, 109),
    ("Smart Thermostat", "Home", "Climasense", 149, 219),
    ("Espresso Machine Barista Pro", "Kitchen", "Cremaline", 399, 599),
    ("Air Fryer 5.8 qt", "Kitchen", "Crispwell", 89, 129),
    ("Stand Mixer 5 qt", "Kitchen", "Whiskworks", 249, 379),
    ("Chef's Knife 8 in", "Kitchen", "Edgecraft", 49, 119),
    ("Nonstick Pan Set (3 pc)", "Kitchen", "Panterra", 59, 99),
    ("Electric Kettle 1.7 L", "Kitchen", "Boilright", 29, 49),
    ("Blender Vortex 1200", "Kitchen", "Whiskworks", 79, 139),
    ("Building Blocks Castle Set", "Toys & Games", "Brickfolk", 59, 99),
    ("Remote Control Race Car", "Toys & Games", "Zoomkid", 35, 59),
    ("Strategy Board Game: Harbors", "Toys & Games", "Meeple Co.", 29, 45),
    ("Plush Bear Large", "Toys & Games", "Snugglies", 19, 35),
    ("Jigsaw Puzzle 1000 pc", "Toys & Games", "Meeple Co.", 15, 25),
    ("Camping Tent 4-Person", "Outdoor", "Trailhead", 129, 219),
    ("Insulated Water Bottle 32 oz", "Outdoor", "Hydrapeak", 25, 45),
    ("Hiking Backpack 40 L", "Outdoor", "Trailhead", 89, 149),
    ("Folding Camp Chair", "Outdoor", "Trailhead", 29, 49),
    ("Sleeping Bag 20F", "Outdoor", "Northloft", 79, 139),
    ("Rain Jacket Packable", "Apparel", "Northloft", 69, 119),
    ("Running Shoes Stride 3", "Apparel", "Fleetfoot", 99, 149),
    ("Merino Wool Socks (3-pack)", "Apparel", "Woolly", 22, 35),
    ("Fleece Hoodie", "Apparel", "Northloft", 45, 75),
    ("Denim Jacket Classic", "Apparel", "Rivet & Co.", 69, 99),
    ("Vitamin C Serum", "Beauty", "Glowlab", 24, 42),
    ("Hair Dryer Ionic", "Beauty", "Silkair", 59, 129),
    ("Electric Toothbrush Sonic", "Beauty", "Brightsmile", 49, 99),
    ("Daily Moisturizer SPF 30", "Beauty", "Glowlab", 18, 32),
    ("Ergonomic Office Chair", "Office", "Postura", 229, 349),
    ("Wireless Keyboard and Mouse", "Office", "Typewell", 49, 79),
    ("Noise-Free Desk Fan", "Office", "Breezewell", 39, 59),
    ("Hardcover Notebook A5", "Office", "Paperly", 12, 20),
    ("Monitor 27 in QHD", "Office", "Vistacast", 249, 379),
)

SUPPLIERS: dict[str, str] = {
    "Electronics": "Pacific Electronics Distribution", "Home": "Hearth & Home Wholesale",
    "Kitchen": "Culinary Goods Supply", "Toys & Games": "Playtime Distributors",
    "Outdoor": "Trailhead Outfitters Supply", "Apparel": "Threadline Apparel Group",
    "Beauty": "Glow Beauty Wholesale", "Office": "Deskline Office Supply",
}

NEIGHBOURHOODS: dict[str, tuple[str, ...]] = {
    "New York": ("Union Square", "Midtown", "Brooklyn Heights", "Upper West Side"),
    "Boston": ("Back Bay", "Seaport", "Cambridgeside"),
    "Chicago": ("The Loop", "Lincoln Park", "Wicker Park"),
    "Austin": ("Downtown", "The Domain", "South Congress"),
    "Denver": ("LoDo", "Cherry Creek", "Highlands"),
    "Seattle": ("Capitol Hill", "South Lake Union", "Ballard"),
    "San Francisco": ("Union Square", "Mission Bay", "Marina"),
    "Los Angeles": ("Santa Monica", "Downtown", "Pasadena"),
    "Miami": ("Brickell", "Wynwood", "Coral Gables"),
    "Atlanta": ("Midtown", "Buckhead", "Ponce City"),
    "Toronto": ("Yonge-Dundas", "Queen West", "Yorkville"),
    "London": ("Oxford Circus", "Canary Wharf", "Camden", "King's Road"),
    "Paris": ("Opéra", "Le Marais", "La Défense"),
    "Berlin": ("Mitte", "Kreuzberg", "Charlottenburg"),
    "Tokyo": ("Shibuya", "Ginza", "Shinjuku"),
    "Sydney": ("CBD", "Bondi Junction", "Parramatta"),
}

HOURS: dict[str, dict[str, tuple[str, str] | None]] = {
    "flagship": dict.fromkeys(("mon", "tue", "wed", "thu", "fri", "sat", "sun"), ("08:00", "22:00")),
    "standard": {**dict.fromkeys(("mon", "tue", "wed", "thu", "fri", "sat"), ("09:00", "21:00")),
                 "sun": ("10:00", "18:00")},
    "express": dict.fromkeys(("mon", "tue", "wed", "thu", "fri", "sat", "sun"), ("07:00", "23:00")),
}
SUNDAY_CLOSED_COUNTRIES = ("DE", "FR")
