"""The claim a reindex holds on its namespace while it builds, kept alive by a heartbeat.

Keys (all under the namespace's hash tag, so each script stays in one Cluster slot):

- ``building``        the generation being built (``put.lua`` writes to it as well as to the
                      live one); expires ``MEMORY_REINDEX_CLAIM_SECONDS`` after the last beat
- ``building:owner``  the builder's random token, with the same expiry
- ``gens``            every generation that may still hold keys (live, being built, or left
                      half-built by a builder that died), so cleaning them never scans

A builder beats after every batch; one that stops (killed, frozen, its host gone) lets the
claim expire, and the next reindex takes the namespace over at once and deletes the
half-built generation's keys. A builder that finds its claim gone stops (Conflict) and
touches nothing of the new owner's. The swap checks the token too, so only the owner ever
makes its generation live.
"""

import secrets
from dataclasses import dataclass

from django.conf import settings

from memories import store
from memories.errors import Conflict

__all__ = ["Claim", "Conflict", "claim_take", "generation_forget", "generations_held"]

# KEYS: gen, building, owner, gens. ARGV: token, ttl_ms. -> new generation, or -1 when a
# live claim exists (its generation is not revealed).
_CLAIM = """
if redis.call('EXISTS', KEYS[2]) == 1 and redis.call('EXISTS', KEYS[3]) == 1 then
  return -1
end
local top = tonumber(redis.call('GET', KEYS[1]) or '0')
for _, g in ipairs(redis.call('SMEMBERS', KEYS[4])) do
  if tonumber(g) > top then top = tonumber(g) end
end
local old = redis.call('GET', KEYS[2])
if old and tonumber(old) > top then top = tonumber(old) end
local new = top + 1
redis.call('SADD', KEYS[4], redis.call('GET', KEYS[1]) or '0', new)
if old then redis.call('SADD', KEYS[4], old) end
redis.call('SET', KEYS[2], new, 'PX', ARGV[2])
redis.call('SET', KEYS[3], ARGV[1], 'PX', ARGV[2])
return new
"""

# KEYS: building, owner. ARGV: token, ttl_ms. -> 1 beat, 0 the claim is not ours any more.
_BEAT = """
if redis.call('GET', KEYS[2]) ~= ARGV[1] then return 0 end
redis.call('PEXPIRE', KEYS[1], ARGV[2])
redis.call('PEXPIRE', KEYS[2], ARGV[2])
return 1
"""

# KEYS: gen, building, owner, format. ARGV: token, generation, index format. -> 1 swapped,
# 0 not ours. The format stamp says which postings format the live generation is in.
_SWAP = """
if redis.call('GET', KEYS[3]) ~= ARGV[1] then return 0 end
redis.call('SET', KEYS[1], ARGV[2])
redis.call('SET', KEYS[4], ARGV[3])
redis.call('DEL', KEYS[2], KEYS[3])
return 1
"""

# KEYS: building, owner. ARGV: token. Drops the claim if it is still ours.
_RELEASE = """
if redis.call('GET', KEYS[2]) == ARGV[1] then redis.call('DEL', KEYS[1], KEYS[2]) end
return 1
"""


def _ttl_ms() -> int:
    return int(settings.MEMORY_REINDEX_CLAIM_SECONDS * 1000)


@dataclass
class Claim:
    """A live claim: the namespace, the generation this builder fills, its token."""

    user_id: str
    generation: int
    token: str

    def _keys(self, *kinds: str) -> list[str]:
        return [store.key(self.user_id, *k.split(":")) for k in kinds]

    def beat(self, client) -> None:
        """Keep the claim alive; raises Conflict when another builder took it over."""
        keys = self._keys("building", "building:owner")
        if not int(client.eval(_BEAT, 2, *keys, self.token, _ttl_ms())):
            raise Conflict(f"the reindex of {self.user_id!r} was taken over (its heartbeat "
                           "stopped for too long)", field="user_id")

    def swap(self, client, *, index_format: str) -> None:
        """Make this generation live (stamped ``index_format``) and drop the claim; Conflict
        when it is not ours."""
        keys = self._keys("gen", "building", "building:owner", "format")
        if not int(client.eval(_SWAP, 4, *keys, self.token, self.generation, index_format)):
            raise Conflict(f"the reindex of {self.user_id!r} was taken over", field="user_id")

    def release(self, client) -> None:
        client.eval(_RELEASE, 2, *self._keys("building", "building:owner"), self.token)


def claim_take(client, user_id: str) -> Claim:
    """Claim namespace ``user_id`` for a new generation (above every one that may hold
    keys). Raises Conflict while another builder's heartbeat is fresh."""
    token = secrets.token_hex(8)
    keys = [store.key(user_id, "gen"), store.key(user_id, "building"),
            store.key(user_id, "building", "owner"), store.key(user_id, "gens")]
    new = int(client.eval(_CLAIM, 4, *keys, token, _ttl_ms()))
    if new < 0:
        raise Conflict(f"a reindex of {user_id!r} is already running", field="user_id")
    return Claim(user_id=user_id, generation=new, token=token)


def generations_held(client, user_id: str) -> set[int]:
    """Every generation of the namespace that may still have keys."""
    return {int(store.text(g)) for g in client.smembers(store.key(user_id, "gens"))}


def generation_forget(client, user_id: str, generation: int) -> None:
    client.srem(store.key(user_id, "gens"), generation)
