"""Catalog browsing (search, product details, reviews) and the customer's wishlist."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field

from servers.kit import Money, ToolError, today, tool
from servers.shopping.rules import get_customer, get_product
from servers.shopping.state import Category, ShoppingState, Wishlist, WishlistItem

Price = Annotated[Money, Field(le=100_000)]
"""A price filter: money (at least 0.01, cents), at most the store's 100,000.00 ceiling."""


@tool(produces=("product_id",), read_only=True)
def search_catalog(s: ShoppingState, query: str | None = None, category: Category | None = None,
                   brand: str | None = None, min_price: Price | None = None, max_price: Price | None = None,
                   min_rating: Annotated[float, Field(ge=0, le=5)] | None = None, in_stock_only: bool = False,
                   sort_by: Literal["relevance", "price_low_to_high", "price_high_to_low", "rating", "newest"]
                   = "relevance", limit: Annotated[int, Field(ge=1, le=50)] = 10) -> dict:
    """Search the store's catalog by keywords and filters; returns matching products with price, rating
    and stock.

    Args:
        query: Keywords matched against product name, brand, category and description (all must match).
        category: Only products in this category.
        brand: Only products of this brand (case-insensitive).
        min_price: Lowest unit price in USD.
        max_price: Highest unit price in USD.
        min_rating: Only products rated at least this (0-5 stars).
        in_stock_only: Hide products that are sold out.
        sort_by: Result order.
        limit: Maximum number of products to return.
    """
    if min_price is not None and max_price is not None and min_price > max_price:
        raise ToolError(f"min_price {min_price} is greater than max_price {max_price}", field="max_price")
    tokens = (query or "").lower().split()
    hits = []
    for p in s.products.values():
        if category is not None and p.category != category:
            continue
        if brand is not None and p.brand.lower() != brand.strip().lower():
            continue
        if (min_price is not None and p.price < min_price) or (max_price is not None and p.price > max_price):
            continue
        if (min_rating is not None and p.rating < min_rating) or (in_stock_only and p.stock == 0):
            continue
        name = p.name.lower()
        haystack = f"{name} {p.brand.lower()} {p.category.replace('_', ' ')} {p.description.lower()}"
        if any(t not in haystack for t in tokens):
            continue
        hits.append((sum(2 if t in name else 1 for t in tokens), p))
    orders = {
        "relevance": lambda h: (-h[0], -h[1].rating, h[1].product_id),
        "price_low_to_high": lambda h: (h[1].price, h[1].product_id),
        "price_high_to_low": lambda h: (-h[1].price, h[1].product_id),
        "rating": lambda h: (-h[1].rating, -h[1].rating_count, h[1].product_id),
        "newest": lambda h: (h[1].listed_on, h[1].product_id),
    }
    hits.sort(key=orders[sort_by])
    if sort_by == "newest":
        hits.reverse()
    return {
        "total_matches": len(hits),
        "products": [{"product_id": p.product_id, "name": p.name, "brand": p.brand, "category": p.category,
                      "price": p.price, "rating": p.rating, "rating_count": p.rating_count,
                      "in_stock": p.stock > 0, "sizes": p.sizes} for _, p in hits[:limit]],
    }


@tool(consumes=("product_id",), read_only=True)
def get_catalog_product(s: ShoppingState, product_id: str) -> dict:
    """Get full details of one product: description, price, rating, stock (per size for sized items),
    per-order limit and whether it can be returned.

    Args:
        product_id: The product id, e.g. PRD-0012.
    """
    p = get_product(s, product_id)
    return {
        "product_id": p.product_id, "name": p.name, "brand": p.brand, "category": p.category,
        "description": p.description, "price": p.price, "rating": p.rating, "rating_count": p.rating_count,
        "in_stock": p.stock > 0, "units_in_stock": p.stock, "sizes": p.sizes, "stock_by_size": p.stock_by_size,
        "available_sizes": [z for z in p.sizes if p.stock_by_size.get(z, 0) > 0],
        "max_per_order": p.max_per_order, "returnable": p.returnable,
        "ships_overnight": not p.bulky, "listed_on": p.listed_on,
    }


@tool(consumes=("product_id",), read_only=True)
def list_product_reviews(s: ShoppingState, product_id: str, min_stars: Annotated[int, Field(ge=1, le=5)] | None
                         = None, sort_by: Literal["newest", "highest", "lowest"] = "newest",
                         limit: Annotated[int, Field(ge=1, le=50)] = 10) -> dict:
    """Read customer reviews of a product with its average rating.

    Args:
        product_id: The product id.
        min_stars: Only reviews with at least this many stars (1-5).
        sort_by: Newest first, or by star rating.
        limit: Maximum number of reviews to return.
    """
    p = get_product(s, product_id)
    rows = [r for r in s.reviews.values() if r.product_id == product_id
            and (min_stars is None or r.stars >= min_stars)]
    if sort_by == "newest":
        rows.sort(key=lambda r: (r.date, r.review_id), reverse=True)
    else:
        rows.sort(key=lambda r: (r.stars if sort_by == "lowest" else -r.stars, r.review_id))
    return {"product_id": product_id, "name": p.name, "average_rating": p.rating, "rating_count": p.rating_count,
            "reviews": rows[:limit]}


def _wishlist_for_edit(s: ShoppingState, customer_id: str) -> Wishlist:
    """The customer's wishlist owned by this call (one record per customer, created on first use)."""
    get_customer(s, customer_id)
    if customer_id not in s.wishlists:
        return s.wishlists.put(customer_id, Wishlist(customer_id))
    return s.wishlists.edit(customer_id)


@tool(consumes=("customer_id",), produces=("product_id",), read_only=True)
def view_wishlist(s: ShoppingState, customer_id: str) -> dict:
    """Show the products a customer saved for later, with current price and availability.

    Args:
        customer_id: The customer's id, e.g. CUS-0003.
    """
    get_customer(s, customer_id)
    wishlist = s.wishlists.get(customer_id) or Wishlist(customer_id)
    items = []
    for item in wishlist.items:
        p = s.products[item.product_id]
        items.append({"product_id": p.product_id, "name": p.name, "price": p.price, "in_stock": p.stock > 0,
                      "added_on": item.added_on})
    return {"customer_id": customer_id, "items": items}


@tool(consumes=("customer_id", "product_id"), establishes=("product_in_wishlist",))
def add_to_wishlist(s: ShoppingState, customer_id: str, product_id: str) -> dict:
    """Save a product to a customer's wishlist (sold-out products can be saved too).

    Args:
        customer_id: The customer's id.
        product_id: The product to save.
    """
    get_product(s, product_id)
    get_customer(s, customer_id)
    current = s.wishlists.get(customer_id)
    if current is not None and any(i.product_id == product_id for i in current.items):
        raise ToolError(f"product {product_id} is already in {customer_id}'s wishlist", field="product_id",
                        code="duplicate")
    wishlist = _wishlist_for_edit(s, customer_id)
    wishlist.items.append(WishlistItem(product_id, today(s).isoformat()))
    return {"customer_id": customer_id, "product_id": product_id, "wishlist_size": len(wishlist.items)}


@tool(consumes=("customer_id", "product_id"), requires=("product_in_wishlist",))
def remove_from_wishlist(s: ShoppingState, customer_id: str, product_id: str) -> dict:
    """Remove a product from a customer's wishlist.

    Args:
        customer_id: The customer's id.
        product_id: The product to remove.
    """
    get_customer(s, customer_id)
    current = s.wishlists.get(customer_id)
    if current is None or all(i.product_id != product_id for i in current.items):
        raise ToolError(f"product {product_id} is not in {customer_id}'s wishlist", field="product_id",
                        code="not_found")
    wishlist = _wishlist_for_edit(s, customer_id)
    wishlist.items = [i for i in wishlist.items if i.product_id != product_id]
    return {"customer_id": customer_id, "product_id": product_id, "wishlist_size": len(wishlist.items)}
