"""Writer of the audit trail."""

from memories.history import actor_name
from memories.models import AuditEvent


def audit_record(*, actor, action: str, target: str, reason: str = "", data=None) -> AuditEvent:
    """Append one audit event (never with memory content)."""
    return AuditEvent.objects.create(actor=actor_name(actor), action=action, target=target,
                                     reason=reason or "", data=data or {})

