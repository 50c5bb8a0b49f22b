from memories.views.dashboard import overview

__all__ = ["overview"]
