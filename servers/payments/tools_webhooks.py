"""Payments tools for webhooks: what was delivered to the merchant's endpoints, and fixing an endpoint."""

from __future__ import annotations

from typing import Literal

from servers.kit import ToolError, Url, iso, now, tool
from servers.payments.state import (
    EventType,
    PaymentsState,
    check_api_key,
    delivery_view,
    endpoint_view,
    get_endpoint,
    get_merchant,
)
from servers.payments.tools_invoices import ApiKey, Limit, Offset


@tool(produces=("endpoint_id", "delivery_id"), consumes=("merchant_id",), read_only=True)
def list_webhook_deliveries(s: PaymentsState, merchant_id: str | None = None, endpoint_id: str | None = None,
                            status: Literal["pending", "retrying", "succeeded", "failed"] | None = None,
                            event_type: EventType | None = None, limit: Limit = 20, offset: Offset = 0) -> dict:
    """Check webhook health: the endpoints (URL, enabled or disabled and why, consecutive failures) and
    their event deliveries, newest first, with attempts, the receiver's last HTTP response and when the
    next retry is due. Failed attempts are retried with growing delays; an endpoint whose deliveries
    keep failing is disabled automatically.

    Args:
        merchant_id: Only endpoints and deliveries of this merchant.
        endpoint_id: Only this endpoint, e.g. WH-0002.
        status: Only deliveries in this state.
        event_type: Only deliveries of this event type.
        limit: How many deliveries to return (1-50).
        offset: How many matching deliveries to skip, for paging.
    """
    if merchant_id is not None:
        get_merchant(s, merchant_id)
    if endpoint_id is not None:
        ep = get_endpoint(s, endpoint_id)
        if merchant_id is not None and ep.merchant_id != merchant_id:
            raise ToolError(f"endpoint {endpoint_id} belongs to {ep.merchant_id}, not {merchant_id}",
                            field="endpoint_id", code="not_owner")
    endpoints = [ep for ep in s.endpoints.values()
                 if (merchant_id is None or ep.merchant_id == merchant_id)
                 and (endpoint_id is None or ep.endpoint_id == endpoint_id)]
    ids = {ep.endpoint_id for ep in endpoints}
    rows = [d for d in s.deliveries.values() if d.endpoint_id in ids
            and (status is None or d.status == status) and (event_type is None or d.event_type == event_type)]
    rows.sort(key=lambda d: (d.created_at, d.delivery_id), reverse=True)
    return {"endpoints": [endpoint_view(s, ep) for ep in endpoints], "total": len(rows), "offset": offset,
            "deliveries": [delivery_view(d) for d in rows[offset:offset + limit]], "as_of": iso(now(s))}


@tool(consumes=("endpoint_id",), establishes=("endpoint_enabled",))
def manage_webhook_endpoint(s: PaymentsState, api_key: ApiKey, endpoint_id: str,
                            action: Literal["enable", "disable", "update_url", "retry_failed"],
                            url: Url | None = None) -> dict:
    """Fix or control a webhook endpoint: enable it again (its failure count is cleared and waiting
    deliveries resume), disable it, point it at a new receiver URL, or queue every failed delivery of an
    enabled endpoint for a fresh attempt within the next minute. Needs the merchant's secret API key.

    Args:
        api_key: The merchant's secret API key (sk_live_...), as the merchant gave it.
        endpoint_id: The endpoint, e.g. WH-0002.
        action: What to do.
        url: The new receiver URL (https://...); only with action update_url.
    """
    ep = get_endpoint(s, endpoint_id)
    check_api_key(s.merchants[ep.merchant_id], api_key)
    if (url is None) == (action == "update_url"):
        raise ToolError("url is required with action update_url and only allowed with it", field="url")
    t = iso(now(s))
    if action == "enable":
        if ep.status == "enabled":
            raise ToolError(f"endpoint {endpoint_id} is already enabled", field="action", code="illegal_state")
        ep = s.endpoints.edit(endpoint_id)
        ep.status, ep.disabled_reason, ep.consecutive_failures = "enabled", None, 0
        return {**endpoint_view(s, ep), "changed": "enabled"}
    if action == "disable":
        if ep.status == "disabled":
            raise ToolError(f"endpoint {endpoint_id} is already disabled", field="action", code="illegal_state")
        ep = s.endpoints.edit(endpoint_id)
        ep.status, ep.disabled_reason = "disabled", f"disabled by the merchant at {t}"
        return {**endpoint_view(s, ep), "changed": "disabled"}
    if action == "update_url":
        if url == ep.url:
            raise ToolError(f"endpoint {endpoint_id} already points at {url}", field="url", code="illegal_state")
        ep = s.endpoints.edit(endpoint_id)
        ep.url, ep.receiver_status = url, 200  # the new receiver answers
        return {**endpoint_view(s, ep), "changed": "url"}
    if ep.status != "enabled":
        raise ToolError(f"endpoint {endpoint_id} is disabled ({ep.disabled_reason}); enable it before retrying "
                        "its deliveries", field="endpoint_id", code="endpoint_disabled")
    failed = [d.delivery_id for d in s.deliveries.values() if d.endpoint_id == endpoint_id and d.status == "failed"]
    if not failed:
        raise ToolError(f"endpoint {endpoint_id} has no failed deliveries to retry", field="action",
                        code="illegal_state")
    for did in failed:
        d = s.deliveries.edit(did)
        d.status, d.attempts, d.next_attempt_at = "pending", 0, t
    return {**endpoint_view(s, s.endpoints[endpoint_id]), "changed": "retry_failed", "requeued": failed}
