"""Static catalogue of the marketplace world: item titles with realistic price ranges per category."""

from __future__ import annotations

from typing import Literal

Category = Literal[
    "electronics", "collectibles", "fashion", "home_garden", "sporting_goods", "toys_hobbies", "music",
    "books_comics", "jewelry_watches", "auto_parts",
]
Condition = Literal["new", "like_new", "used_good", "used_fair", "for_parts"]
ListingFormat = Literal["auction", "fixed_price"]
Carrier = Literal["USPS", "UPS", "FedEx", "DHL"]

CONDITIONS: tuple[str, ...] = ("new", "like_new", "used_good", "used_fair", "for_parts")
TRANSIT_DAYS: dict[str, int] = {"USPS": 4, "UPS": 3, "FedEx": 2, "DHL": 5}
AUCTION_DURATIONS: tuple[int, ...] = (1, 3, 5, 7, 10)

# (title, low price, high price) per category; every title is used at most once per world.
ITEMS: dict[str, tuple[tuple[str, int, int], ...]] = {
    "electronics": (
        ("Sony WH-1000XM4 Wireless Headphones", 120, 260), ("Nintendo Switch OLED Console", 220, 330),
        ("Apple iPad Air 4th Gen 64GB", 280, 420), ("Canon EOS R6 Mirrorless Camera Body", 1200, 1700),
        ("GoPro HERO10 Black Action Camera", 180, 300), ("Bose SoundLink Revolve+ Speaker", 110, 200),
        ("Samsung Galaxy S22 128GB Unlocked", 250, 420), ("DJI Mini 3 Pro Drone", 480, 720),
        ("Kindle Paperwhite 11th Gen", 70, 130), ("Garmin Forerunner 245 GPS Watch", 110, 190),
        ("Sony PlayStation 5 Disc Edition", 380, 520), ("Apple AirPods Pro 2nd Gen", 130, 210),
    ),
    "collectibles": (
        ("Signed 1998 World Series Baseball", 150, 600), ("Pokemon Base Set Charizard Holo Card", 250, 900),
        ("1978 Kenner Luke Skywalker Action Figure", 80, 300), ("Vintage Coca-Cola Tin Sign", 40, 160),
        ("1921 Morgan Silver Dollar", 35, 90), ("First Day Cover Stamp Collection", 20, 80),
        ("Hot Wheels Redline 1968 Custom Camaro", 60, 250), ("Disney Trading Pin Lot of 25", 30, 110),
        ("1950s Zippo Lighter", 40, 150), ("Funko Pop Freddy Funko Limited Edition", 60, 240),
        ("Magic The Gathering Dominaria Booster Box", 90, 160), ("Hummel Figurine Apple Tree Girl", 25, 90),
    ),
    "fashion": (
        ("Levi's 501 Vintage Denim Jeans W32", 35, 90), ("Nike Air Jordan 1 Retro High Size 10", 150, 400),
        ("Patagonia Down Sweater Jacket Medium", 90, 180), ("Ray-Ban Wayfarer Sunglasses", 60, 130),
        ("Coach Leather Crossbody Bag", 70, 180), ("Burberry Cashmere Scarf", 120, 300),
        ("Dr. Martens 1460 Boots Size 9", 70, 140), ("Canada Goose Expedition Parka Large", 450, 800),
        ("Adidas Samba OG Size 8", 60, 120), ("Vintage Harley-Davidson T-Shirt XL", 30, 110),
        ("Hermes Silk Tie", 80, 160), ("Lululemon Align Leggings Size 6", 40, 80),
    ),
    "home_garden": (
        ("KitchenAid Artisan Stand Mixer", 180, 320), ("Dyson V11 Cordless Vacuum", 220, 380),
        ("Le Creuset Dutch Oven 5.5 qt", 160, 280), ("Vitamix 5200 Blender", 200, 330),
        ("Weber Spirit II Gas Grill", 280, 420), ("Nespresso Vertuo Coffee Maker", 80, 150),
        ("Mid-Century Teak Sideboard", 400, 900), ("Persian Wool Area Rug 5x8", 180, 600),
        ("Instant Pot Duo 8 qt", 50, 100), ("Cuisinart 12-Piece Cookware Set", 120, 220),
        ("Philips Hue Starter Kit", 90, 160), ("Fiskars Garden Tool Set", 25, 60),
    ),
    "sporting_goods": (
        ("Trek FX 3 Hybrid Bike", 500, 850), ("Callaway Rogue Driver", 150, 260),
        ("Peloton Cycling Shoes Size 42", 50, 90), ("Yeti Tundra 45 Cooler", 200, 300),
        ("Bowflex SelectTech 552 Dumbbells", 250, 400), ("Burton Custom Snowboard 158", 280, 450),
        ("Wilson Pro Staff Tennis Racket", 120, 200), ("Osprey Atmos 65 Backpack", 150, 240),
        ("REI Half Dome 2 Tent", 130, 220), ("Garmin Edge 530 Bike Computer", 170, 260),
        ("Titleist Pro V1 Golf Balls 4 Dozen", 90, 150), ("Rawlings Heart of the Hide Glove", 180, 300),
    ),
    "toys_hobbies": (
        ("LEGO Millennium Falcon 75192", 600, 900), ("LEGO Hogwarts Castle 71043", 350, 520),
        ("Warhammer 40k Space Marine Army Lot", 120, 350), ("Lionel Polar Express O-Gauge Train Set", 250, 420),
        ("Barbie 1959 Reproduction Doll", 50, 140), ("Hornby Flying Scotsman OO Locomotive", 150, 280),
        ("Traxxas Slash 4x4 RC Truck", 280, 420), ("Settlers of Catan First Edition", 40, 120),
        ("Speedcube Collection of 6", 30, 80), ("American Girl Doll Samantha", 90, 250),
        ("Nerf Ultra One Blaster", 25, 60), ("Vintage Erector Set No. 7", 80, 220),
    ),
    "music": (
        ("Fender American Professional Stratocaster", 1100, 1600), ("Gibson Les Paul Studio", 1000, 1500),
        ("Yamaha P-125 Digital Piano", 480, 650), ("Pink Floyd Dark Side of the Moon First Press LP", 120, 500),
        ("Technics SL-1200 Turntable", 450, 800), ("Shure SM7B Microphone", 300, 400),
        ("Roland TD-07 Electronic Drum Kit", 500, 700), ("Martin D-28 Acoustic Guitar", 2000, 2800),
        ("Beatles Abbey Road UK Pressing LP", 90, 350), ("Korg Minilogue Synthesizer", 380, 520),
        ("Boss Katana 50 Guitar Amp", 170, 240), ("Selmer Alto Saxophone", 700, 1600),
    ),
    "books_comics": (
        ("The Great Gatsby 1953 Scribner Edition", 60, 200), ("Lord of the Rings 1965 Box Set", 150, 450),
        ("Signed Stephen King The Stand", 120, 400), ("Complete Calvin and Hobbes Hardcover", 90, 160),
        ("National Geographic Lot 1970s", 30, 90), ("Encyclopaedia Britannica 1911 Set", 200, 600),
        ("Dune 1965 Book Club Edition", 60, 180), ("Mastering the Art of French Cooking 1961", 80, 250),
        ("Audubon Birds of America Print Folio", 150, 500), ("Amazing Spider-Man #300", 400, 900),
        ("Batman The Killing Joke First Print", 40, 120), ("Harry Potter Hardcover Set of 7", 90, 200),
    ),
    "jewelry_watches": (
        ("Rolex Oyster Perpetual 36", 5500, 7500), ("Omega Seamaster Diver 300M", 3800, 5200),
        ("Seiko Prospex Turtle Dive Watch", 280, 420), ("Tiffany Heart Tag Bracelet", 150, 300),
        ("Cartier Love Ring 18k", 1100, 1700), ("Casio G-Shock GW-M5610", 80, 140),
        ("Pandora Moments Charm Bracelet", 40, 90), ("TAG Heuer Aquaracer", 1200, 1900),
        ("Vintage 14k Gold Locket", 180, 450), ("Akoya Pearl Strand Necklace 18in", 120, 400),
        ("Citizen Eco-Drive Promaster", 150, 260), ("Swarovski Crystal Drop Earrings", 40, 110),
    ),
    "auto_parts": (
        ("Bosch ICON Wiper Blades Pair", 20, 45), ("WeatherTech FloorLiners for F-150", 100, 170),
        ("K&N Cold Air Intake Kit", 220, 340), ("Michelin Pilot Sport 4S Tires Set of 4", 700, 1000),
        ("Brembo Front Brake Pads", 60, 120), ("Garmin Dash Cam 67W", 170, 240),
        ("Thule Motion XT Roof Box", 550, 800), ("OEM Toyota Tacoma Grille 2020", 150, 300),
        ("Optima RedTop Car Battery", 170, 240), ("Chrome Harley Exhaust Pipes", 250, 500),
        ("Holley Sniper EFI Kit", 1100, 1500), ("Vintage Mustang Hubcaps Set of 4", 80, 220),
    ),
}

CATEGORIES: tuple[str, ...] = tuple(ITEMS)

DESCRIPTION_OPENERS: tuple[str, ...] = (
    "Selling my {title}.", "Up for sale: {title}.", "{title} from a smoke-free home.",
    "Estate find: {title}.", "Lightly used {title}, well looked after.",
)
DESCRIPTION_DETAILS: dict[str, str] = {
    "new": "Brand new, sealed in the original packaging.",
    "like_new": "Used a handful of times, no visible wear; original box included.",
    "used_good": "Normal signs of use, fully working; see photos for details.",
    "used_fair": "Visible wear and a few scratches, but works as it should.",
    "for_parts": "Sold as-is for parts or repair; does not power on.",
}
