from django.shortcuts import render

from memories.models import Memory, Session


def overview(request):
    return render(request, "memories/overview.html", {
        "memories": Memory.objects.filter(deleted_at__isnull=True).count(),
        "sessions": Session.objects.count(),
    })
