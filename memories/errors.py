"""Domain errors raised by services and mapped to JSON (API) or form errors (pages).

Each carries the HTTP status it maps to and the request field it is about, so a client can
tell which input to fix: ``{"error": {"code", "message", "field"}}``.
"""


class ServiceError(Exception):
    status = 400
    code = "invalid"

    def __init__(self, message: str, *, field: str | None = None, **extra):
        super().__init__(message)
        self.message = message
        self.field = field
        self.extra = extra

    def as_dict(self) -> dict:
        return {"error": {"code": self.code, "message": self.message, "field": self.field,
                          **self.extra}}


class InvalidInput(ServiceError):
    status = 400
    code = "invalid"


class PermissionDenied(ServiceError):
    status = 403
    code = "forbidden"


class NotFound(ServiceError):
    status = 404
    code = "not_found"


class Conflict(ServiceError):
    status = 409
    code = "conflict"


class TooLarge(ServiceError):
    status = 413
    code = "too_large"


class Busy(ServiceError):
    """Too many of this kind of request run at once; ``retry_after_seconds`` says when to try
    again."""

    status = 429
    code = "busy"


class IndexRebuilding(ServiceError):
    """Redis lost a namespace's index (a restart without persistence, a flush) and it is
    being rebuilt from the database: a recall cannot answer truthfully yet."""

    status = 503
    code = "index_rebuilding"
