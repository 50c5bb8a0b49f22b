"""Pages that span capabilities (overview, activity, usage), included at the root:
``path("", include("console.urls"))``. Each app names its own pages in its own ``urls.py``
and URL namespace (``memories``, ``sessions``, ``search``, ``lab``, ``operations``,
``accounts``, ``integrations``).
"""

from django.urls import path

from console.views import activity, overview, usage

app_name = "console"

urlpatterns = [
    path("", overview.overview, name="overview"),
    path("activity/", activity.activity, name="activity"),
    path("usage/", usage.usage_page, name="usage"),
]
