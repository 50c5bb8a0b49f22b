from django.contrib.auth.middleware import LoginRequiredMiddleware


class ConsoleLoginRequiredMiddleware(LoginRequiredMiddleware):
    """Login required for every page; the JSON API authenticates with bearer tokens instead
    (answering 401 in JSON rather than redirecting an agent to a login form)."""

    def process_view(self, request, view_func, view_args, view_kwargs):
        if request.path_info.startswith("/api/"):
            return None
        return super().process_view(request, view_func, view_args, view_kwargs)
