"""Hot session windows in Redis (the transcript itself lives in the database).

Per session, under its namespace's hash tag: ``sess:<id>:meta`` (hash), ``sess:<id>:msgs``
(sorted set, score = seq, member = the message as JSON) and ``sess:<id>:ts`` (sorted set,
score = epoch seconds, member = seq) for time-range reads. Messages are ordered by the seq
the database assigned, not by arrival: two appends that commit in order may reach Redis in
the other order, and a sorted set puts them right where a list could not. Each call is one
Lua script: append, trim to the window, TTL refresh of every key (with jitter, so sessions
created together do not expire together) and the window read happen together, so no key is
ever left without a TTL.
"""

import json
import random

from memories import store
from sessions.models import Message, Session

# A hard cap on the hot window; folding (sessions.session_fold) normally keeps it far smaller.
WINDOW_MAX = 1000

_APPEND = """
-- KEYS: meta, msgs, ts. ARGV: ttl, window_max, meta_json_or_empty, summary_upto_seq, n,
-- then (seq, ts, json)...
local ttl, maxn = tonumber(ARGV[1]), tonumber(ARGV[2])
if ARGV[3] ~= '' then
  local meta = cjson.decode(ARGV[3])
  for k, v in pairs(meta) do redis.call('HSET', KEYS[1], k, v) end
end
local n = tonumber(ARGV[5])
for i = 0, n - 1 do
  local seq, ts, msg = ARGV[6 + i * 3], ARGV[7 + i * 3], ARGV[8 + i * 3]
  redis.call('ZADD', KEYS[2], seq, msg)
  redis.call('ZADD', KEYS[3], ts, seq)
  redis.call('HSET', KEYS[1], 'last_seq', seq)
end
-- Folded messages never come back, whoever appends them (a warm from a stale read, say):
-- every seq up to the higher of the stored and the given summary_upto_seq goes.
local upto = math.max(tonumber(redis.call('HGET', KEYS[1], 'summary_upto_seq')) or 0,
                      tonumber(ARGV[4]))
if upto > 0 then
  redis.call('HSET', KEYS[1], 'summary_upto_seq', upto)
  local folded = redis.call('ZRANGEBYSCORE', KEYS[2], '-inf', upto, 'WITHSCORES')
  redis.call('ZREMRANGEBYSCORE', KEYS[2], '-inf', upto)
  for i = 2, #folded, 2 do redis.call('ZREM', KEYS[3], folded[i]) end
end
local over = redis.call('ZCARD', KEYS[2]) - maxn
if over > 0 then
  local gone = redis.call('ZRANGE', KEYS[2], 0, over - 1, 'WITHSCORES')
  redis.call('ZREMRANGEBYRANK', KEYS[2], 0, over - 1)
  for i = 2, #gone, 2 do redis.call('ZREM', KEYS[3], gone[i]) end
end
for i = 1, 3 do
  if redis.call('EXISTS', KEYS[i]) == 1 then redis.call('EXPIRE', KEYS[i], ttl) end
end
return redis.call('ZCARD', KEYS[2])
"""

_READ = """
-- KEYS: meta, msgs, ts. ARGV: ttl, last. Sliding TTL: a read refreshes it too.
if redis.call('EXISTS', KEYS[1]) == 0 then return false end
for i = 1, 3 do
  if redis.call('EXISTS', KEYS[i]) == 1 then redis.call('EXPIRE', KEYS[i], tonumber(ARGV[1])) end
end
return redis.call('ZRANGE', KEYS[2], -tonumber(ARGV[2]), -1)
"""


def keys(session: Session) -> list[str]:
    return [store.key(session.user_id, "sess", session.session_id, kind)
            for kind in ("meta", "msgs", "ts")]


def ttl_with_jitter(ttl_seconds: int) -> int:
    """TTL plus up to 10 % random jitter (at least 1 s)."""
    return ttl_seconds + random.randint(0, max(1, ttl_seconds // 10))


def message_json(m: Message) -> str:
    return json.dumps({"seq": m.seq, "role": m.role, "content": m.content,
                       "at": m.ts.isoformat()}, ensure_ascii=False)


def window_append(session: Session, messages: list[Message]) -> int:
    """Mirror appended messages into the hot window; returns the window length."""
    args = [ttl_with_jitter(session.ttl_seconds), WINDOW_MAX,
            json.dumps({"user_id": session.user_id, "agent_id": session.agent_id,
                        "session_id": session.session_id}), session.summary_upto_seq,
            len(messages)]
    for m in messages:
        args += [m.seq, m.ts.timestamp(), message_json(m)]
    return int(store.get_client().eval(_APPEND, 3, *keys(session), *args))


def window_read(session: Session, last: int) -> list[dict] | None:
    """The newest ``last`` messages, oldest first; None when the session is cold."""
    raw = store.get_client().eval(_READ, 3, *keys(session),
                                  ttl_with_jitter(session.ttl_seconds), last)
    if raw is None:
        return None
    return [json.loads(store.text(r)) for r in raw]


def window_warm(session: Session) -> int:
    """Load the newest window of a session back from the database (a cold one, or one with
    a gap). ``summary_upto_seq`` is read afresh: a fold may have committed since ``session``
    was read, and its messages must not return to the window."""
    session.summary_upto_seq = Session.objects.filter(pk=session.pk).values_list(
        "summary_upto_seq", flat=True).first() or 0
    recent = list(session.messages.filter(seq__gt=session.summary_upto_seq)
                  .order_by("-seq")[:WINDOW_MAX])[::-1]
    return window_append(session, recent) if recent else 0


_TRIM = """
-- KEYS: meta, msgs, ts. ARGV: from_seq, upto_seq, ttl. Drop folded messages.
redis.call('ZREMRANGEBYSCORE', KEYS[2], '-inf', ARGV[2])
for seq = tonumber(ARGV[1]), tonumber(ARGV[2]) do redis.call('ZREM', KEYS[3], seq) end
if redis.call('EXISTS', KEYS[1]) == 1 then
  redis.call('HSET', KEYS[1], 'summary_upto_seq', ARGV[2])
end
for i = 1, 3 do
  if redis.call('EXISTS', KEYS[i]) == 1 then redis.call('EXPIRE', KEYS[i], tonumber(ARGV[3])) end
end
return redis.call('ZCARD', KEYS[2])
"""


def window_trim(session: Session, from_seq: int, upto_seq: int) -> int:
    """Drop messages ``from_seq..upto_seq`` (folded into the summary) from the window."""
    return int(store.get_client().eval(_TRIM, 3, *keys(session), from_seq, upto_seq,
                                       ttl_with_jitter(session.ttl_seconds)))


def window_drop(session_keys: list[str]) -> None:
    """Delete exactly these keys (never a pattern: ``f*o`` must not match ``foo``)."""
    store.get_client().delete(*session_keys)


def is_hot(session: Session) -> bool:
    return bool(store.get_client().exists(keys(session)[0]))


def warm_live_sessions() -> int:
    """Restore the hot window of every session still within its TTL (after a Redis flush):
    sessions updated less than their ``ttl_seconds`` ago and not hot. Returns how many."""
    import datetime as dt

    from django.utils import timezone

    now = timezone.now()
    warmed = 0
    recent = Session.objects.filter(updated_at__gte=now - dt.timedelta(days=30))
    for session in recent.iterator():
        if session.updated_at + dt.timedelta(seconds=session.ttl_seconds) < now:
            continue
        if not is_hot(session):
            window_warm(session) or window_append(session, [])
            warmed += 1
    return warmed
