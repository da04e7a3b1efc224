"""Menu templates per cuisine and the option groups items can carry. Plain data, no logic.

An item template is (name, menu category, base price in USD, vegetarian, spicy, option-group keys).
"""

from __future__ import annotations

# key: (display name, required, max choices, ((option, extra price), ...))
OPTION_GROUPS: dict[str, tuple[str, bool, int, tuple[tuple[str, float], ...]]] = {
    "size": ("Size", True, 1, (("Regular", 0.0), ("Large", 3.0))),
    "pizza_size": ("Pizza size", True, 1, (("10-inch", 0.0), ("12-inch", 3.0), ("16-inch", 7.0))),
    "spice": ("Spice level", True, 1, (("Mild", 0.0), ("Medium", 0.0), ("Hot", 0.0))),
    "protein": ("Protein", True, 1, (("Chicken", 0.0), ("Tofu", 0.0), ("Beef", 2.0), ("Shrimp", 3.0))),
    "rice": ("Rice", True, 1, (("White rice", 0.0), ("Brown rice", 1.0), ("No rice", 0.0))),
    "pizza_extras": ("Extra toppings", False, 3, (("Extra cheese", 1.5), ("Mushrooms", 1.0), ("Olives", 1.0),
                                                 ("Pepperoni", 2.0), ("Jalapenos", 1.0))),
    "burger_extras": ("Add-ons", False, 3, (("Bacon", 2.0), ("Avocado", 2.0), ("Extra patty", 3.5),
                                            ("Cheddar", 1.0))),
    "side": ("Side", False, 1, (("Fries", 3.5), ("Side salad", 3.0), ("Sweet potato fries", 4.0))),
    "bread": ("Bread", False, 2, (("Plain naan", 2.5), ("Garlic naan", 3.0), ("Roti", 2.0))),
    "drink_size": ("Size", True, 1, (("Small", 0.0), ("Medium", 0.5), ("Large", 1.0))),
    "shake": ("Flavour", True, 1, (("Vanilla", 0.0), ("Chocolate", 0.0), ("Strawberry", 0.0))),
    "broth": ("Broth", True, 1, (("Tonkotsu", 0.0), ("Shoyu", 0.0), ("Miso", 0.5))),
    "extras_bowl": ("Extras", False, 2, (("Extra egg", 1.5), ("Extra noodles", 2.0), ("Avocado", 2.0))),
}

Item = tuple[str, str, float, bool, bool, tuple[str, ...]]
MENUS: dict[str, tuple[Item, ...]] = {
    "italian": (
        ("Bruschetta", "Starters", 8.5, True, False, ()), ("Caprese Salad", "Starters", 9.5, True, False, ()),
        ("Spaghetti Carbonara", "Pasta", 16.0, False, False, ("size",)),
        ("Penne Arrabbiata", "Pasta", 14.0, True, True, ("size",)), ("Lasagna", "Mains", 17.0, False, False, ()),
        ("Mushroom Risotto", "Mains", 16.5, True, False, ()),
        ("Chicken Parmigiana", "Mains", 19.0, False, False, ("side",)),
        ("Tiramisu", "Desserts", 7.5, True, False, ()), ("Panna Cotta", "Desserts", 7.0, True, False, ()),
        ("Sparkling Water", "Drinks", 3.5, True, False, ()),
    ),
    "pizza": (
        ("Margherita Pizza", "Pizza", 12.0, True, False, ("pizza_size", "pizza_extras")),
        ("Pepperoni Pizza", "Pizza", 14.0, False, False, ("pizza_size", "pizza_extras")),
        ("Quattro Formaggi Pizza", "Pizza", 15.0, True, False, ("pizza_size",)),
        ("Hawaiian Pizza", "Pizza", 14.5, False, False, ("pizza_size",)),
        ("BBQ Chicken Pizza", "Pizza", 15.5, False, False, ("pizza_size", "pizza_extras")),
        ("Garlic Knots", "Sides", 6.0, True, False, ()), ("Caesar Salad", "Sides", 8.5, False, False, ()),
        ("Chocolate Brownie", "Desserts", 5.0, True, False, ()), ("Cola", "Drinks", 2.5, True, False, ("drink_size",)),
    ),
    "japanese": (
        ("Salmon Nigiri", "Sushi", 8.0, False, False, ()), ("Spicy Tuna Roll", "Sushi", 9.0, False, True, ()),
        ("California Roll", "Sushi", 8.5, False, False, ()), ("Vegetable Tempura", "Starters", 10.0, True, False, ()),
        ("Ramen Bowl", "Ramen", 15.0, False, False, ("broth", "extras_bowl")),
        ("Chicken Katsu Curry", "Mains", 15.0, False, False, ("rice",)), ("Edamame", "Starters", 5.0, True, False, ()),
        ("Miso Soup", "Starters", 3.5, True, False, ()), ("Matcha Ice Cream", "Desserts", 5.5, True, False, ()),
        ("Green Tea", "Drinks", 3.0, True, False, ()),
    ),
    "chinese": (
        ("Pork Dumplings", "Dim Sum", 8.0, False, False, ()), ("Vegetable Spring Rolls", "Dim Sum", 6.5, True, False, ()),
        ("Kung Pao Chicken", "Mains", 14.0, False, True, ("rice",)), ("Mapo Tofu", "Mains", 12.0, True, True, ("rice",)),
        ("Beef Chow Fun", "Noodles", 14.5, False, False, ()), ("Sweet and Sour Chicken", "Mains", 13.5, False, False, ("rice",)),
        ("Egg Fried Rice", "Rice", 9.0, True, False, ()), ("Hot and Sour Soup", "Soups", 6.0, False, True, ()),
        ("Sesame Balls", "Desserts", 5.5, True, False, ()),
    ),
    "mexican": (
        ("Tacos (3)", "Tacos", 11.0, False, False, ("protein",)), ("Carne Asada Burrito", "Burritos", 13.0, False, False, ()),
        ("Veggie Burrito", "Burritos", 11.0, True, False, ()), ("Quesadilla", "Mains", 10.0, False, False, ("protein",)),
        ("Nachos", "Starters", 9.5, True, False, ()), ("Guacamole and Chips", "Starters", 7.5, True, False, ()),
        ("Elote", "Sides", 5.0, True, False, ()), ("Churros", "Desserts", 6.0, True, False, ()),
        ("Horchata", "Drinks", 3.5, True, False, ("drink_size",)),
    ),
    "indian": (
        ("Vegetable Samosas", "Starters", 6.5, True, False, ()),
        ("Chicken Tikka Masala", "Curries", 16.0, False, False, ("spice", "bread")),
        ("Lamb Rogan Josh", "Curries", 18.0, False, True, ("spice", "bread")),
        ("Palak Paneer", "Curries", 14.0, True, False, ("spice", "bread")),
        ("Chana Masala", "Curries", 13.0, True, False, ("spice",)), ("Butter Chicken", "Curries", 16.0, False, False, ("bread",)),
        ("Vegetable Biryani", "Rice", 14.0, True, False, ("spice",)), ("Garlic Naan", "Breads", 3.5, True, False, ()),
        ("Mango Lassi", "Drinks", 4.5, True, False, ()),
    ),
    "thai": (
        ("Pad Thai", "Noodles", 14.0, False, False, ("protein", "spice")),
        ("Green Curry", "Curries", 15.0, False, True, ("protein", "rice")),
        ("Tom Yum Soup", "Soups", 8.0, False, True, ()), ("Massaman Curry", "Curries", 15.5, False, False, ("rice",)),
        ("Papaya Salad", "Starters", 9.0, True, True, ()), ("Pad See Ew", "Noodles", 14.0, False, False, ("protein",)),
        ("Fried Spring Rolls", "Starters", 6.5, True, False, ()), ("Mango Sticky Rice", "Desserts", 7.0, True, False, ()),
        ("Thai Iced Tea", "Drinks", 4.0, True, False, ()),
    ),
    "american": (
        ("Classic Cheeseburger", "Burgers", 13.0, False, False, ("burger_extras", "side")),
        ("Bacon BBQ Burger", "Burgers", 15.0, False, False, ("burger_extras", "side")),
        ("Veggie Burger", "Burgers", 13.0, True, False, ("side",)), ("Buffalo Wings", "Starters", 12.0, False, True, ()),
        ("Pulled Pork Sandwich", "Sandwiches", 13.5, False, False, ("side",)),
        ("Mac and Cheese", "Sides", 9.0, True, False, ()), ("French Fries", "Sides", 4.5, True, False, ()),
        ("Onion Rings", "Sides", 5.0, True, False, ()), ("Milkshake", "Drinks", 6.0, True, False, ("shake",)),
        ("Apple Pie", "Desserts", 6.0, True, False, ()),
    ),
    "mediterranean": (
        ("Hummus Plate", "Mezze", 8.0, True, False, ()), ("Falafel Wrap", "Wraps", 11.0, True, False, ("side",)),
        ("Chicken Shawarma Plate", "Plates", 15.0, False, False, ()), ("Lamb Kofta", "Plates", 17.0, False, False, ()),
        ("Greek Salad", "Salads", 10.0, True, False, ()), ("Spanakopita", "Mezze", 8.0, True, False, ()),
        ("Baklava", "Desserts", 5.5, True, False, ()), ("Mint Lemonade", "Drinks", 4.0, True, False, ()),
    ),
    "korean": (
        ("Bibimbap", "Rice Bowls", 14.0, False, False, ("protein",)),
        ("Kimchi Fried Rice", "Rice Bowls", 12.0, False, True, ()),
        ("Korean Fried Chicken", "Mains", 16.0, False, False, ("spice",)), ("Beef Bulgogi", "Mains", 17.0, False, False, ("rice",)),
        ("Japchae", "Noodles", 13.0, True, False, ()), ("Tteokbokki", "Street Food", 11.0, True, True, ()),
        ("Kimchi Pancake", "Starters", 10.0, True, False, ()), ("Barley Tea", "Drinks", 3.0, True, False, ()),
    ),
    "vietnamese": (
        ("Pho Bo", "Pho", 14.0, False, False, ("size",)), ("Chicken Pho", "Pho", 13.0, False, False, ("size",)),
        ("Banh Mi", "Sandwiches", 9.5, False, False, ("protein",)), ("Fresh Spring Rolls", "Starters", 7.0, True, False, ()),
        ("Bun Cha", "Noodles", 14.0, False, False, ()), ("Lemongrass Tofu", "Mains", 12.0, True, False, ("rice",)),
        ("Vietnamese Iced Coffee", "Drinks", 4.5, True, False, ()),
    ),
    "vegan": (
        ("Buddha Bowl", "Bowls", 13.0, True, False, ("extras_bowl",)), ("Vegan Burger", "Burgers", 14.0, True, False, ("side",)),
        ("Cauliflower Wings", "Starters", 10.0, True, True, ()), ("Quinoa Salad", "Salads", 11.0, True, False, ()),
        ("Lentil Soup", "Soups", 7.0, True, False, ()), ("Avocado Toast", "Brunch", 10.0, True, False, ()),
        ("Chia Pudding", "Desserts", 6.5, True, False, ()), ("Green Smoothie", "Drinks", 7.0, True, False, ("drink_size",)),
    ),
}

COURIERS = ("Marco R.", "Aisha K.", "Tom B.", "Lena S.", "Diego M.", "Priya N.", "Sam W.", "Yuki T.", "Omar H.",
            "Chloe D.", "Ben A.", "Mia L.", "Jonas F.", "Sofia G.", "Ravi P.", "Emma C.")
PROMOS = (  # code, kind, value, min subtotal, max discount, expiry offset minutes, first order only, description
    ("SAVE5", "flat", 5.0, 25.0, None, 30 * 24 * 60, False, "$5 off orders of $25 or more"),
    ("WELCOME15", "percent", 15.0, 15.0, 10.0, 60 * 24 * 60, True, "15% off your first order (up to $10)"),
    ("FREEDEL", "free_delivery", 0.0, 15.0, None, 14 * 24 * 60, False, "free delivery on orders of $15 or more"),
    ("LUNCH20", "percent", 20.0, 20.0, 8.0, 90, False, "20% off lunch (up to $8), today only"),
    ("SPRING10", "percent", 10.0, 10.0, 6.0, -3 * 24 * 60, False, "10% off spring orders (ended)"),
    ("BIGORDER", "flat", 10.0, 60.0, None, 30 * 24 * 60, False, "$10 off orders of $60 or more"),
)
