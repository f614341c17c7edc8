"""SQL of the notify job, one import away: subscriptions, the outbox (enqueued inside the
crawler's transaction), the sending side, the credit ledger and the development mail sink.

Each part lives in a module of its own (``notify_subscriptions``, ``notify_outbox``,
``notify_delivery``, ``notify_credits``); this module names them together for the notify job's
code, which reads ``repo.subscribe``, ``repo.due_outbox``… Importing it registers the outbox as a
new-entries hook (``fairfetch.store`` does), so whoever opens a store writes notifications in the
same transaction as the entries that cause them.
"""

from __future__ import annotations

from fairfetch.store.notify_credits import (
    grant,
    ledger,
    list_sink,
    record_sink,
)
from fairfetch.store.notify_delivery import (
    OutboxClaims,
    balances,
    cancel,
    close_issue,
    count_pending,
    digest_context,
    due_outbox,
    hold_credits,
    hold_queue,
    item_context,
    item_contexts,
    list_outbox,
    mark_failed,
    mark_sent,
    mark_temporary,
    publisher_balances,
    queue_held_from,
)
from fairfetch.store.notify_outbox import (
    enqueue_new_entries,
)
from fairfetch.store.notify_subscriptions import (
    CONFIRM_RESEND_AFTER,
    CONFIRMS_PER_ADDRESS_PER_DAY,
    Subscribed,
    confirm,
    confirmation_status,
    import_subscriptions,
    list_subscriptions,
    reader_exists,
    subscribe,
    subscription_by_token,
    unsubscribe,
    update_subscription,
)

__all__ = [
    "CONFIRMS_PER_ADDRESS_PER_DAY",
    "CONFIRM_RESEND_AFTER",
    "OutboxClaims",
    "Subscribed",
    "balances",
    "cancel",
    "close_issue",
    "confirm",
    "confirmation_status",
    "count_pending",
    "digest_context",
    "due_outbox",
    "enqueue_new_entries",
    "grant",
    "hold_credits",
    "hold_queue",
    "import_subscriptions",
    "item_context",
    "item_contexts",
    "ledger",
    "list_outbox",
    "list_sink",
    "list_subscriptions",
    "mark_failed",
    "mark_sent",
    "mark_temporary",
    "publisher_balances",
    "queue_held_from",
    "reader_exists",
    "record_sink",
    "subscribe",
    "subscription_by_token",
    "unsubscribe",
    "update_subscription",
]
