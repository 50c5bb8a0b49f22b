"""Roles are Django groups: viewer < editor < admin (cumulative). Superusers are admins."""

from memories.errors import PermissionDenied

ROLES = ("viewer", "editor", "admin")


def role_of(user) -> str | None:
    """The highest role of ``user`` (None for anonymous or a user in no role group)."""
    if user is None or not user.is_authenticated:
        return None
    if user.is_superuser:
        return "admin"
    names = set(user.groups.values_list("name", flat=True)) if not hasattr(
        user, "_role_names") else user._role_names
    user._role_names = names
    for role in reversed(ROLES):
        if role in names:
            return role
    return None


def has_role(user, role: str) -> bool:
    current = role_of(user)
    return current is not None and ROLES.index(current) >= ROLES.index(role)


def require_role(user, role: str) -> None:
    """Raise PermissionDenied (403) unless ``user`` has at least ``role``."""
    if not has_role(user, role):
        raise PermissionDenied(f"this action needs the {role} role", field=None)
