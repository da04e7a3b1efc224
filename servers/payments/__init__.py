"""Payments: a merchant payments platform (Stripe-like) with invoices, card charges, refunds, payouts and
webhooks; every state change is transactional and announced to the merchant's webhook endpoints.

Merchants (each with a secret API key, a settlement currency and a refund window) bill customers with
invoices (draft -> open -> paid / void / uncollectible; uncollectible can still be paid or voided).
Paying charges the customer's saved card; the charge's net (after a 2.9% + 0.30 fee) is pending for
two days, then settles into the available balance, from which refunds and payouts to the bank are
made. Every state change enqueues a webhook event for each enabled, subscribed endpoint.

Time (``on_time``): charges settle, pending refunds succeed after 30 minutes, payouts arrive (standard
two days, instant 30 minutes), open invoices past their due date turn overdue (``invoice.overdue``),
and due webhook deliveries are attempted: a receiver that fails is retried after 5, 15, 45 and 135
minutes, a delivery is abandoned (failed) after 5 attempts, and an endpoint whose deliveries have all
failed for 3 hours is disabled automatically.

Failure rules (each a ToolError naming the argument; the call changes nothing):

* unknown merchant_id / customer_id / invoice_id / payment_id / payment_method_id / endpoint_id;
* wrong api_key: money-moving and endpoint calls need the secret key of the merchant that owns the
  invoice, charge or endpoint;
* currency mismatch: an invoice must be in the customer's billing currency; a payout must be in the
  merchant's settlement currency;
* illegal invoice transitions: finalize needs a draft, void needs open or uncollectible (a paid
  invoice is refunded, not voided), mark_uncollectible needs open;
* paying an invoice that is draft, void or already paid;
* the card: not the invoice customer's card, expired, declined by the issuer (do_not_honor), or
  declined for insufficient funds; a customer with no saved card;
* refunds: already fully refunded, more than the remaining refundable amount, after the merchant's
  refund window, or more than the available balance can cover (after the charge's pending funds);
* payouts: more than the available balance (pending funds cannot be paid out), nothing available,
  instant payouts beyond the merchant's daily instant limit;
* webhooks: enabling an enabled / disabling a disabled endpoint, a URL equal to the current one, a
  url without action update_url (or update_url without url), retrying deliveries of a disabled
  endpoint, retrying when nothing failed; an endpoint filter that belongs to another merchant.

Cross-domain: :func:`servers.payments.world.seed_invoices` gives the invoices of a seed's world; the
budget world of the same seed records some of them as bill expenses (same id, amount, merchant name).
"""

from servers.kit import Domain
from servers.payments import discovery, tools_invoices, tools_money, tools_webhooks
from servers.payments.state import PaymentsState, on_time
from servers.payments.world import generate

domain = Domain(
    "payments", PaymentsState, generate,
    description=("Payments: a merchant payments platform with customers and saved cards, invoices "
                 "(draft, open, paid, void, uncollectible, overdue by due date), card charges, partial and full "
                 "refunds within a refund window, pending and available balances, payouts to the bank, and "
                 "webhook endpoints whose event deliveries are retried with backoff and disabled after "
                 "repeated failures."),
    modules=(tools_invoices, tools_money, tools_webhooks, discovery),
    on_time=on_time,
)

__all__ = ["PaymentsState", "discovery", "domain", "generate", "tools_invoices", "tools_money", "tools_webhooks"]
