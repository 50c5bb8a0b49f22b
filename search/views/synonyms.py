"""The synonyms editor: the whole table as text, one set per line (``search.synonym_sets``).

Viewers read it; editors save it. A save replaces the table (``synonyms_replace``) and is
recorded in the audit feed in the same transaction. Profiles with ``synonyms`` on expand
queries with it at once; the index never changes.
"""

from django.contrib import messages
from django.db import transaction
from django.shortcuts import redirect
from django.views.decorators.http import require_http_methods
from django.views.decorators.vary import vary_on_headers

from accounts.roles import has_role
from console.forms import add_service_error
from console.pages import forbidden, render_page, role_required
from memories import services
from memories.errors import ServiceError
from search.forms import SynonymsForm
from search.models import RankingProfile
from search.synonym_sets import comment_lines, synonyms_replace, synonyms_text


@require_http_methods(["GET", "POST"])
@vary_on_headers("HX-Request")
@role_required("viewer")
def synonyms_edit(request):
    """GET: the table (read-only for viewers). POST (editor): replace it; a bad line is a
    form error naming the line. htmx gets ``#synonyms``."""
    can_edit = has_role(request.user, "editor")
    status = 200
    if request.method == "POST":
        if not can_edit:
            return forbidden(
                request,
                "Saving synonyms needs the editor role; your role is viewer. "
                "Ask an admin if you need more access.",
            )
        form = SynonymsForm(request.POST)
        if form.is_valid():
            try:
                with transaction.atomic():
                    count = synonyms_replace(text=form.cleaned_data["text"], actor=request.user)
                    services.audit_record(
                        actor=request.user,
                        action="synonyms_replaced",
                        target="synonyms",
                        data={"sets": count},
                    )
            except ServiceError as exc:
                add_service_error(form, exc)
                status = exc.status
            else:
                kept = comment_lines(form.cleaned_data["text"])
                messages.success(
                    request,
                    f"Saved {count} synonym set{'s' if count != 1 else ''}"
                    + (f" and {kept} comment line{'s' if kept != 1 else ''}" if kept else "")
                    + ". Profiles with synonyms on use them from the next query.",
                )
                if not request.htmx:
                    return redirect("search:synonyms")
                form = SynonymsForm(initial={"text": synonyms_text()})
        else:
            status = 400
    else:
        form = SynonymsForm(initial={"text": synonyms_text()})
    if not can_edit:
        form.fields["text"].widget.attrs["readonly"] = True
    return render_page(
        request,
        "search/synonyms.html",
        {
            "form": form,
            "can_edit": can_edit,
            "profiles": RankingProfile.objects.filter(synonyms=True).values_list("name", flat=True),
        },
        partial="synonyms",
        status=status,
    )
