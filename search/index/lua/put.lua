-- Replace one memory in the index and hot store, atomically.
-- KEYS[1]: the namespace's memory hash key (routes the script to the namespace's slot).
-- ARGV: base, memory_id, version, mode ('write' | 'build'), avgdl_ref_default, k1_ref, b_ref,
--       ttl_seconds (0 = none), stream_maxlen, n_hash_pairs, hash pairs..., n_meta_pairs,
--       meta pairs..., n_fields, then per field: name, dl, n_terms, term/tf pairs...,
--       format (the caller's index format stamp, last)
-- No hash pairs and no fields remove the memory (forget, purge, expiry).
--
-- Generations: the live index of a namespace is generation `gen` (field keys `c:…` for 0,
-- `c@N:…` for N); while a reindex builds generation `building`, 'write' updates both, and the
-- builder's 'build' puts touch only the new one. `ver` holds the last version put per memory:
-- an older version never overwrites a newer one (a slow sync, or the builder's snapshot).
-- Every key is built from `base`, so all share the namespace's hash tag. Each field of a
-- generation records the terms it has postings for (`<field>:terms`) and the memories it
-- has a document vector for (`<field>:docs`): deleting a generation then never scans.
local base, id, version, mode = ARGV[1], ARGV[2], tonumber(ARGV[3]), ARGV[4]
local ref_default, k1, b = tonumber(ARGV[5]), tonumber(ARGV[6]), tonumber(ARGV[7])
local ttl, maxlen = tonumber(ARGV[8]), ARGV[9]
local i = 10

local current = tonumber(redis.call('HGET', base .. 'ver', id))
if current and current > version then return 'stale' end
-- A namespace's first put stamps it with the caller's format; an older index keeps its own
-- stamp (or none) until a reindex rebuilds it.
if redis.call('EXISTS', base .. 'ver') == 0 then
  redis.call('SET', base .. 'format', ARGV[#ARGV], 'NX')
end
redis.call('HSET', base .. 'ver', id, version)

local function suffix(gen)
  if gen == nil or gen == '0' then return '' end
  return '@' .. gen
end
local live = redis.call('GET', base .. 'gen') or '0'
local building = redis.call('GET', base .. 'building')
local targets = {}
if mode == 'build' then
  if not building then return redis.error_reply('no generation is being built') end
  targets[1] = suffix(building)
else
  targets[1] = suffix(live)
  if building then targets[2] = suffix(building) end
end

local function remove_field(fname)
  local dkey = base .. fname .. ':d:' .. id
  local old = redis.call('HGETALL', dkey)
  if #old == 0 then return end
  local skey = base .. fname .. ':stats'
  for j = 1, #old, 2 do
    local term = old[j]
    if string.sub(term, 1, 1) == '#' then
      if term == '#dl' then
        redis.call('HINCRBY', skey, 'N', -1)
        redis.call('HINCRBY', skey, 'total_len', -tonumber(old[j + 1]))
      end
    else
      redis.call('ZREM', base .. fname .. ':t:' .. term, id)
    end
  end
  redis.call('DEL', dkey)
  redis.call('SREM', base .. fname .. ':docs', id)
  redis.call('ZREM', base .. fname .. ':exp', id)
end

local function in_targets(fname)
  local at = string.find(fname, '@', 1, true)
  local sfx = at and string.sub(fname, at) or ''
  for _, t in ipairs(targets) do if t == sfx then return true end end
  return false
end

-- Old state out: every field name this memory was indexed under, in the target generations.
local fields_key = base .. 'fields'
for _, fname in ipairs(redis.call('SMEMBERS', fields_key)) do
  if in_targets(fname) then remove_field(fname) end
end

local mkey = base .. 'm:' .. id
local n_hash = tonumber(ARGV[i]); i = i + 1
local hash = {}
for j = 1, n_hash * 2 do hash[j] = ARGV[i + j - 1] end
i = i + n_hash * 2
local n_meta = tonumber(ARGV[i]); i = i + 1
local meta, exp = {}, ''
for j = 1, n_meta * 2 do meta[j] = ARGV[i + j - 1] end
for j = 1, n_meta * 2, 2 do if meta[j] == '#exp' then exp = meta[j + 1] end end
i = i + n_meta * 2

local op = 'delete'
-- Recalls bump access counts here first and in the database later (memories.access), so
-- the row being mirrored may be behind this hash: the larger count, and its time, stay.
local seen = redis.call('HMGET', mkey, 'access_count', 'accessed_at')
redis.call('DEL', mkey)
if n_hash > 0 then
  op = 'upsert'
  redis.call('HSET', mkey, unpack(hash))
  if tonumber(seen[1]) and tonumber(seen[1]) > (tonumber(redis.call('HGET', mkey, 'access_count')) or 0) then
    redis.call('HSET', mkey, 'access_count', seen[1], 'accessed_at', seen[2])
  end
  if ttl > 0 then redis.call('EXPIRE', mkey, ttl) end
  redis.call('SADD', base .. 'ids', id)
else
  redis.call('SREM', base .. 'ids', id)
end

local n_fields = tonumber(ARGV[i]); i = i + 1
for _ = 1, n_fields do
  local field, dl, n_terms = ARGV[i], tonumber(ARGV[i + 1]), tonumber(ARGV[i + 2])
  local first = i + 3
  i = first + n_terms * 2
  for _, sfx in ipairs(targets) do
    local fname = field .. sfx
    redis.call('SADD', fields_key, fname)
    local skey = base .. fname .. ':stats'
    local ref = tonumber(redis.call('HGET', skey, 'avgdl_ref'))
    if not ref then
      ref = ref_default
      redis.call('HSET', skey, 'avgdl_ref', ref)
    end
    local norm = k1 * (1 - b + b * dl / ref)
    local dkey = base .. fname .. ':d:' .. id
    local doc = {'#dl', dl}
    for j = 1, #meta do doc[#doc + 1] = meta[j] end
    for t = first, first + n_terms * 2 - 1, 2 do
      local term, tf = ARGV[t], tonumber(ARGV[t + 1])
      -- Posting score: -(level + code / 2^34), where level = floor(impact * 2^16) is the tf
      -- part under the reference statistics and code = tf * 2^17 + (2^17 - 1 - dl) carries
      -- the raw tf and dl, so a reader scores the posting exactly from the score alone.
      -- Negated so ZRANGE walks best-first; equal scores come in ascending memory_id order.
      local level = math.floor(tf / (tf + norm) * 65536)
      local code = tf * 131072 + (131071 - dl)
      redis.call('ZADD', base .. fname .. ':t:' .. term, -(level + code / 17179869184), id)
      redis.call('SADD', base .. fname .. ':terms', term)
      doc[#doc + 1] = term
      doc[#doc + 1] = tf
    end
    redis.call('HSET', dkey, unpack(doc))
    redis.call('SADD', base .. fname .. ':docs', id)
    if exp ~= '' then redis.call('ZADD', base .. fname .. ':exp', tonumber(exp), id) end
    redis.call('HINCRBY', skey, 'N', 1)
    redis.call('HINCRBY', skey, 'total_len', dl)
  end
end

if mode == 'write' then
  redis.call('XADD', base .. 'stream', 'MAXLEN', '~', maxlen, '*', 'op', op, 'id', id,
             'version', version)
end
return op
