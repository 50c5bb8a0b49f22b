"""Load the fictional demo data (``console.demo_data``) and, optionally, a console login.

Idempotent: memories go through ``services.memory_create_many`` (a second run deduplicates
every one of them), sessions whose id exists already are skipped (a new one gets its rolling
summary), and the ranking-lab example (``console.demo_lab``) is written once, so the command
can run on every start. ``--admin-password`` creates or updates the superuser ``admin`` (group
``admin``) with that password.
"""

import datetime as dt

from django.contrib.auth import get_user_model
from django.contrib.auth.models import Group
from django.core.management.base import BaseCommand, CommandError
from django.db import transaction

from console import demo_data, demo_lab
from memories import services
from sessions import services as sessions
from sessions.models import Session

ADMIN_USERNAME = "admin"


def _when(value):
    """ISO 8601 string -> aware datetime (naive is taken as UTC); datetimes pass through."""
    if value is None or isinstance(value, dt.datetime):
        moment = value
    else:
        moment = dt.datetime.fromisoformat(value)
    if moment is not None and moment.tzinfo is None:
        moment = moment.replace(tzinfo=dt.UTC)
    return moment


class Command(BaseCommand):
    help = "Load the demo memories and sessions (idempotent); optionally set the admin login."

    def add_arguments(self, parser):
        parser.add_argument(
            "--admin-password",
            default=None,
            metavar="PASSWORD",
            help="create or update the superuser 'admin' with this password",
        )

    def handle(self, *args, admin_password, **options):
        if admin_password is not None:
            if not admin_password:
                raise CommandError("--admin-password must not be empty")
            created = self._ensure_admin(admin_password)
            self.stdout.write(
                f"{'created' if created else 'updated'} login {ADMIN_USERNAME} "
                "(superuser, group admin)"
            )

        items = [{**m, "created_at": _when(m.get("created_at"))} for m in demo_data.demo_memories()]
        results = services.memory_create_many(items=items, actor="load_demo")
        dup = sum(1 for _, was_dup in results if was_dup)

        new_sessions = skipped = messages = 0
        created_ids = []
        for spec in demo_data.demo_sessions():
            if Session.objects.filter(session_id=spec["session_id"]).exists():
                skipped += 1
                continue
            with transaction.atomic():
                sessions.session_create(
                    user_id=spec["user_id"],
                    session_id=spec["session_id"],
                    agent_id=spec.get("agent_id") or "",
                    created_at=_when(spec["created_at"]),
                    metadata=spec.get("metadata") or {},
                )
                sessions.session_append(
                    session_id=spec["session_id"],
                    messages=[
                        {"role": m["role"], "content": m["content"], "at": _when(m.get("at"))}
                        for m in spec["messages"]
                    ],
                )
            new_sessions += 1
            messages += len(spec["messages"])
            created_ids.append(spec["session_id"])
        summaries = demo_lab.demo_summaries(created_ids)
        lab = demo_lab.demo_lab()

        self.stdout.write(
            f"memories: {len(results) - dup} created, {dup} already present; "
            f"sessions: {new_sessions} created ({messages} messages, {summaries} summaries), "
            f"{skipped} already present; "
            + (
                f"lab: query set {lab['query_set']}, {lab['judgments']} judgments, "
                f"runs {lab['runs'][0]} and {lab['runs'][1]}"
                if lab
                else "lab: already present"
            )
        )
        if len(results) - dup or new_sessions or lab:
            services.audit_record(
                actor="cli",
                action="load_demo",
                target="demo",
                data={
                    "memories_created": len(results) - dup,
                    "sessions_created": new_sessions,
                    "lab": lab,
                },
            )

    @transaction.atomic
    def _ensure_admin(self, password: str) -> bool:
        user, created = get_user_model().objects.get_or_create(username=ADMIN_USERNAME)
        user.is_superuser = True
        user.is_staff = True
        user.is_active = True
        user.set_password(password)
        user.save()
        group, _ = Group.objects.get_or_create(name="admin")
        user.groups.add(group)
        return created
