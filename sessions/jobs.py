"""Session jobs (django-rq): thin, each calls one writer."""

def session_fold_job(session_id: str) -> dict:
    """Fold a long session's oldest messages into its rolling summary."""
    from sessions.services import session_fold

    return session_fold(session_id=session_id)



def session_extract_job(session_id: str, first_seq: int, last_seq: int) -> dict:
    """Write the memories drawn from a session's folded messages (MEMORY_EXTRACT_ON_FOLD)."""
    from memories.errors import NotFound
    from sessions.extract import session_extract

    try:
        out = session_extract(session_id=session_id, dry_run=False, first_seq=first_seq,
                              last_seq=last_seq)
    except NotFound:  # the session was deleted since
        return {"memories": 0, "method": ""}
    return {"memories": len(out["memory_ids"]), "method": out["method"]}
