"""Vocabulary for the seeded catalog: brands, product types with typical prices, selling points and
review phrasing by sentiment. Plain data, so generation stays fast and the text reads like a store's.
"""

from __future__ import annotations

# category -> (brands, ((product type, typical price in USD), ...), selling points)
CATALOG: dict[str, tuple[tuple[str, ...], tuple[tuple[str, float], ...], tuple[str, ...]]] = {
    "electronics": (
        ("Voltix", "Auralis", "Nexon", "Pixelon"),
        (("Wireless Earbuds", 79), ("Bluetooth Speaker", 59), ("Noise-Cancelling Headphones", 199),
         ("4K Streaming Stick", 45), ("Smartwatch", 229), ("USB-C Charger", 25), ("Portable Power Bank", 39),
         ("Mechanical Keyboard", 99), ("Wireless Mouse", 29), ("HD Webcam", 65)),
        ("up to 30 hours of battery life", "Bluetooth 5.3 with multipoint pairing", "fast USB-C charging",
         "a 2-year limited warranty", "works with iOS, Android and Windows"),
    ),
    "home_kitchen": (
        ("Hearthly", "Cookwell", "Brewmaster", "Nestora"),
        (("Nonstick Skillet", 35), ("Chef's Knife", 49), ("Pour-Over Coffee Maker", 32), ("Stand Mixer", 279),
         ("Air Fryer", 99), ("Cast Iron Dutch Oven", 79), ("Electric Kettle", 39), ("Bamboo Cutting Board", 22),
         ("Blender", 89)),
        ("dishwasher safe", "PFOA-free coating", "BPA-free materials", "a lifetime warranty",
         "compact enough for small kitchens"),
    ),
    "apparel": (
        ("Northline", "Urban Thread", "Coastal Co.", "Fieldwear"),
        (("Cotton Crew T-Shirt", 19), ("Slim Fit Jeans", 59), ("Hooded Sweatshirt", 45), ("Rain Jacket", 89),
         ("Flannel Shirt", 39), ("Running Shorts", 29), ("Merino Wool Sweater", 79), ("Chino Pants", 49)),
        ("100% organic cotton", "a relaxed, true-to-size fit", "machine washable", "moisture-wicking fabric",
         "reinforced seams"),
    ),
    "shoes": (
        ("Stridefit", "Trailhawk", "Cloudstep"),
        (("Running Shoes", 119), ("Trail Sneakers", 99), ("Leather Boots", 159), ("Canvas Slip-Ons", 45),
         ("Hiking Boots", 139), ("Sandals", 39)),
        ("a cushioned foam midsole", "a grippy rubber outsole", "a waterproof upper", "a breathable mesh lining",
         "a removable insole"),
    ),
    "beauty": (
        ("Luminelle", "PureBloom", "Glowry"),
        (("Hydrating Face Serum", 28), ("Mineral Sunscreen SPF 50", 18), ("Vitamin C Moisturizer", 32),
         ("Argan Hair Oil", 16), ("Clay Face Mask", 14), ("Lip Balm Set", 9)),
        ("fragrance free", "dermatologist tested", "cruelty free and vegan", "suitable for sensitive skin",
         "made with hyaluronic acid"),
    ),
    "sports_outdoors": (
        ("Summit Gear", "Peakline", "Aquaflow"),
        (("Yoga Mat", 29), ("Insulated Water Bottle", 24), ("Camping Tent", 189), ("Adjustable Dumbbells", 249),
         ("Trekking Poles", 59), ("Sleeping Bag", 99), ("Resistance Bands", 19)),
        ("lightweight and packable", "rated for three seasons", "non-slip texture", "a carry bag included",
         "built for daily training"),
    ),
    "books": (
        ("Harbor Press", "Lantern Books", "Quillstone"),
        (("Novel", 17), ("Cookbook", 29), ("Field Guide", 22), ("Biography", 24), ("Mystery", 15),
         ("Science Primer", 19)),
        ("a New York Times bestseller", "hardcover, 320 pages", "paperback with illustrations",
         "a book-club favorite", "includes a reader's guide"),
    ),
    "toys": (
        ("Brightblocks", "Tinker Lab", "PlayNest"),
        (("Building Block Set", 49), ("Remote Control Car", 59), ("Wooden Puzzle", 19), ("Plush Bear", 22),
         ("Science Kit", 34), ("Board Game", 29)),
        ("for ages 6 and up", "non-toxic materials", "batteries included", "great for family game night",
         "encourages STEM learning"),
    ),
    "grocery": (
        ("Green Valley", "Daily Harvest Co.", "Roastery Row"),
        (("Whole Bean Coffee 2 lb", 24), ("Organic Green Tea", 9), ("Extra Virgin Olive Oil", 16),
         ("Raw Honey", 12), ("Mixed Nuts", 14), ("Dark Chocolate 6-Pack", 18)),
        ("USDA organic", "fair-trade sourced", "non-GMO", "small-batch", "resealable packaging"),
    ),
    "furniture": (
        ("Oakhaven", "Loftline", "Cradle & Co."),
        (("Standing Desk", 399), ("Ergonomic Office Chair", 289), ("Bookshelf", 149), ("Nightstand", 119),
         ("Sofa Bed", 649), ("Dining Table", 499)),
        ("solid wood construction", "easy tool-free assembly", "supports up to 300 lb",
         "ships in two boxes", "scratch-resistant finish"),
    ),
}

ADJECTIVES = ("Classic", "Pro", "Essential", "Ultra", "Compact", "Deluxe", "Eco", "Premium", "Everyday")
BOOK_WORDS_A = ("Silent", "Last", "Hidden", "Northern", "Salt", "Summer", "Paper", "Wild", "Golden", "Quiet")
BOOK_WORDS_B = ("Harbor", "Garden", "Orchard", "Lighthouse", "River", "Kitchen", "Forest", "Atlas", "House",
                "Season")

REVIEW_TITLES = {
    "good": ("Exactly what I needed", "Great value", "Love it", "Would buy again", "Exceeded expectations"),
    "mixed": ("Decent for the price", "Good, not great", "Does the job", "A few quirks"),
    "bad": ("Disappointed", "Stopped working quickly", "Not as described", "Would not recommend"),
}
REVIEW_BODIES = {
    "good": ("Arrived quickly and works perfectly.", "The quality is better than I expected.",
             "I use it every day and it still looks new.", "Bought a second one as a gift."),
    "mixed": ("It works, but the instructions were confusing.", "Quality is fine; shipping took a while.",
              "Runs a little small, so size up.", "Good overall, though it feels a bit cheap."),
    "bad": ("It broke after two weeks.", "The color was nothing like the pictures.",
            "Customer service was slow to respond.", "Returned it; the fit was way off."),
}
