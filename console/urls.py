"""Pages that span capabilities (overview, activity), included at the root:
``path("", include("console.urls"))``. Each app names its own pages in its own ``urls.py``
and URL namespace (``memories``, ``sessions``, ``search``, ``lab``, ``operations``,
``accounts``, ``integrations``).
"""

from django.urls import path

from console.views import activity, overview

app_name = "console"

urlpatterns = [
    path("", overview.overview, name="overview"),
    path("activity/", activity.activity, name="activity"),
]
