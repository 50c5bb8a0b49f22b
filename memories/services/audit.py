"""Writer of the audit trail."""

from memories.models import AuditEvent
from memories.services.create import _actor_name


def audit_record(*, actor, action: str, target: str, reason: str = "", data=None) -> AuditEvent:
    """Append one audit event (never with memory content)."""
    return AuditEvent.objects.create(actor=_actor_name(actor), action=action, target=target,
                                     reason=reason or "", data=data or {})

