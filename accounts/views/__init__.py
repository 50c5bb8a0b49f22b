"""The accounts pages: API tokens (``tokens``) and users (``users``)."""
