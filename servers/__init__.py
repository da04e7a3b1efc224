"""Stateful MCP servers (the PROVE environments): a small kit plus one package per domain.

This package imports nothing from ``prove_jax`` or ``data``: each server is a standalone product,
run with ``python -m servers.<domain> --transport stdio|http``.
"""

PAPER_TOOL_COUNTS: dict[str, int] = {
    # Finance
    "banking": 17, "trading": 13, "payments": 10,
    # Productivity
    "calendar": 17, "email": 17, "filesystem": 40,
    # Commerce
    "shopping": 23, "marketplace": 13, "retail_chain": 11,
    # Travel
    "travel_booking": 20, "maps": 16,
    # Social
    "social_media": 15, "team_chat": 11,
    # IoT
    "iot_devices": 25, "vehicle": 20,
    # Knowledge / CRM
    "crm": 16, "issue_tracker": 20,
    # Lifestyle
    "budget": 12, "food_delivery": 17, "video_meeting": 10,
}
"""User-visible tools per domain in the paper (Table 2); 343 in total."""

DOMAINS: tuple[str, ...] = tuple(PAPER_TOOL_COUNTS)
"""Every served domain, in the paper's order (Table 2)."""

assert sum(PAPER_TOOL_COUNTS.values()) == 343
