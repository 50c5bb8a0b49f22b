"""Load the demo (``console/fixtures/demo.json``) through the import service and,
optionally, a console login.

The fixture is an export document (schema 4) with times relative to the load: a fictional
team's bilingual memories in five namespaces (``team-harbor``, ``agent-support``,
``agent-ops``, ``王磊``, ``mei.lin@harbor.example``) with their versions (edited with
reasons, forgotten, restored, rolled back, consolidated, superseded), the review queue's
proposals, twelve sessions with summaries and a ranking-lab example (a query set, graded
judgments, the profile ``support-tuned`` in two versions and a run of each). It is written
with ``backup.import_memories(mode="replace")``, the path of every backup, so the command:

- loads it when none of its namespaces, sessions or query sets is there yet;
- otherwise says the demo is present and loads nothing (``scripts/run`` runs it on every
  start), unless ``--replace``: the demo namespaces are then swapped for a fresh copy.

Then the demo's agent users (``support-bot``, ``ops-bot``, ``harbor-assistant``: editors
with a token each, restricted to their namespace; the tokens' secrets are never shown)
recall the questions of ``fixtures/demo_recalls.json`` as they were served at their moments
before the load (``console.demo_recalls``), and give the feedback it lists: the Recalls and
Usage pages start with a story. On ``--replace`` their earlier traces go first.

``--admin-password`` creates or updates the superuser ``admin`` (group ``admin``).
"""

import json
from pathlib import Path

from django.contrib.auth import get_user_model
from django.contrib.auth.models import Group
from django.core.management.base import BaseCommand, CommandError
from django.db import transaction

from console.demo_recalls import demo_editor, demo_recalls_replay
from lab.models import QuerySet
from memories import services
from memories.models import Memory
from operations import backup
from sessions.models import Session

ADMIN_USERNAME = "admin"
FIXTURE = Path(__file__).resolve().parents[2] / "fixtures" / "demo.json"
REVIEWER = "demo-reviewer"  # grades the lab example; an editor without a password


def demo_document() -> dict:
    """The fixture as a document (its times still relative)."""
    with open(FIXTURE, encoding="utf-8") as fh:
        return json.load(fh)


def demo_present(doc: dict) -> list[str]:
    """What of the demo is there already: its namespaces holding memories, its sessions
    and its query sets, by name."""
    namespaces = sorted({m["user_id"] for m in doc["memories"]})
    found = sorted(set(Memory.objects.filter(user_id__in=namespaces)
                       .values_list("user_id", flat=True)))
    found += sorted(Session.objects.filter(
        session_id__in=[s["session_id"] for s in doc["sessions"]])
        .values_list("session_id", flat=True))
    found += sorted(QuerySet.objects.filter(
        name__in=[q["name"] for q in doc["lab"]["query_sets"]]).values_list("name", flat=True))
    return found


class Command(BaseCommand):
    help = "Load the demo data once (or --replace it); optionally set the admin login."

    def add_arguments(self, parser):
        parser.add_argument(
            "--admin-password", default=None, metavar="PASSWORD",
            help="create or update the superuser 'admin' with this password")
        parser.add_argument(
            "--replace", action="store_true",
            help="load the demo again, replacing what its namespaces hold now")

    def handle(self, *args, admin_password, replace, **options):
        if admin_password is not None:
            if not admin_password:
                raise CommandError("--admin-password must not be empty")
            created = self._ensure_admin(admin_password)
            self.stdout.write(f"{'created' if created else 'updated'} login {ADMIN_USERNAME} "
                              "(superuser, group admin)")
        doc = demo_document()
        present = demo_present(doc)
        if present and not replace:
            self.stdout.write(f"demo already present ({', '.join(present[:5])}"
                              f"{', …' if len(present) > 5 else ''}): nothing loaded "
                              "(--replace loads it again)")
            return
        demo_editor(REVIEWER)
        result = backup.import_memories(doc=doc, mode="replace", actor="load_demo")
        messages = sum(len(s["messages"]) for s in doc["sessions"])
        self.stdout.write(
            f"memories: {result['restored']} loaded ({result['removed']} replaced); "
            f"sessions: {result['sessions']} ({messages} messages); conflicts: "
            f"{result['conflicts']}; lab: {result['query_sets']} query set, "
            f"{result['judgments']} judgments, {result['runs']} runs")
        result["recalls"] = demo_recalls_replay()
        self.stdout.write(f"recalls: {result['recalls']} by the demo's agents, with feedback")
        services.audit_record(actor="cli", action="load_demo", target="demo", data=result)

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
