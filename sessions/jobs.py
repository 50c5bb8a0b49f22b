"""Session jobs (django-rq): thin, each calls one writer."""

def session_fold_job(session_id: str) -> dict:
    """Fold a long session's oldest messages into its rolling summary."""
    from sessions.services import session_fold

    return session_fold(session_id=session_id)

