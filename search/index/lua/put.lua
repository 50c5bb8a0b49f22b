-- Replace one or more memories of one namespace in the index and hot store, atomically.
-- KEYS[1]: the namespace's hash key of the first memory (routes the script to its slot).
-- ARGV: base, mode ('write' | 'build'), stream_maxlen, format (the caller's index format
--       stamp), n_memories, then per memory:
--       memory_id, version, ttl_seconds (0 = none), n_hash_pairs, hash pairs..., record.
-- The record (search.index.fields.record_text) is the memory's document, one string of six
-- lines: "<n> <x>" (its content and context lengths in tokens), the content terms, their
-- frequencies, the context terms, theirs, the filter fields as JSON. Every index field is
-- derived from it by the reader (c: the content; s: the content stemmed, length n; xs: that
-- and the context, length n + x). No hash pairs and an empty record remove a memory
-- (forget, purge, expiry).
-- Memory ids are distinct within one call. Returns one op per memory: 'upsert', 'delete'
-- or 'stale'.
--
-- Keys, under `base` (so all share the namespace's hash tag): `m:<id>` the hot-store hash;
-- `v<sfx>:d:<id>` the record (a string) of generation sfx ('' for 0, '@N' for N); `<field><sfx>:stats`
-- N and total_len per field; `ver` the last version put per memory (an older version never
-- overwrites a newer one: a slow sync, or a reindex's snapshot); `ids` the memories held;
-- `fields` the record names of the generations written (`v`, `v@3`); `stream` the write
-- stream. No postings are stored: each process compiles its serving index from the records
-- (search.serving.feed). Deleting a generation walks `ids` (search.index.generations).
--
-- Generations: while a reindex builds generation `building`, 'write' updates both the live
-- and the building one, and the builder's 'build' puts touch only the new one.
-- An index of format 6 or older (per-field document vectors `<field><sfx>:d:<id>` and one
-- sorted set per term) is upgraded memory by memory as it is written: its old vectors give
-- the lengths to take out of the statistics and are deleted; its sorted sets, read by no one
-- now, go with the generation when the background reindex replaces it.
local base, mode, maxlen, format = ARGV[1], ARGV[2], ARGV[3], ARGV[4]
local n_memories = tonumber(ARGV[5])
local i = 6
local FIELDS = {'c', 's', 'xs'}

-- A namespace's first put stamps it with the caller's format; an older index keeps its own
-- stamp (or none) until a reindex rebuilds it. A write (not a build) that finds no `ver`
-- starts either a new namespace or one whose index Redis lost: its stamp says 'new:' until
-- a recall has checked the database (search.index_lost.settle_new), so a partial index is
-- never served as whole.
if redis.call('EXISTS', base .. 'ver') == 0 then
  local stamp = format
  if mode ~= 'build' then stamp = 'new:' .. format end
  redis.call('SET', base .. 'format', stamp, 'NX')
end
local stamp = redis.call('GET', base .. 'format') or '1'
local legacy = stamp ~= format and stamp ~= 'new:' .. format

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

local known = {}
for _, name in ipairs(redis.call('SMEMBERS', base .. 'fields')) do known[name] = true end

local n_delta, len_delta = {}, {}   -- field name -> change of N / total_len
local ids_added, ids_removed = {}, {}
local ops = {}
local function bump(t, k, v) t[k] = (t[k] or 0) + v end

-- Commands with many arguments, in slices (Lua's unpack takes a few thousand at most).
local function many(cmd, key, list, step)
  for s = 1, #list, step do
    local e = math.min(#list, s + step - 1)
    redis.call(cmd, key, unpack(list, s, e))
  end
end

-- HSET of n field/value pairs of ARGV from `at`, in slices.
local function hset_args(key, at, n)
  for s = at, at + n * 2 - 1, 2000 do
    redis.call('HSET', key, unpack(ARGV, s, math.min(at + n * 2 - 1, s + 1999)))
  end
end

-- A record's six lines (see above).
local function lines(rec)
  local out, start = {}, 1
  for k = 1, 5 do
    local stop = string.find(rec, '\n', start, true)
    out[k] = string.sub(rec, start, stop - 1)
    start = stop + 1
  end
  out[6] = string.sub(rec, start)
  return out
end

-- The lengths a record gives each field (0: no document in that field), from its first
-- line (search.index.fields.field_lengths).
local function record_lengths(rec)
  local n, x = string.match(rec, '^(%d+) (%d+)')
  n, x = tonumber(n), tonumber(x)
  return {c = n, s = n, xs = n + x}
end

-- A memory's previous document in generation sfx: {lens = {field = dl}, rec = its record}
-- from its record, or from the per-field vectors of a format-6 index (deleted here: the
-- record replaces them); nil when it had none.
local function take_old(sfx, id, rkey)
  local rec = redis.call('GET', rkey)
  if rec then return {lens = record_lengths(rec), rec = rec} end
  if not legacy then return nil end
  local lens, found = {}, false
  for _, field in ipairs(FIELDS) do
    local vkey = base .. field .. sfx .. ':d:' .. id
    local dl = tonumber(redis.call('HGET', vkey, '#dl'))
    if dl then
      lens[field], found = dl, true
      redis.call('DEL', vkey)
    else
      lens[field] = 0
    end
  end
  if found then return {lens = lens} end
  return nil
end

-- Which field documents differ between an old record and the new one: the content terms,
-- their frequencies and the filter fields change c, s and xs; the context's, xs alone.
local function changed_fields(old, rec)
  if not old or not old.rec or rec == '' then return {c = true, s = true, xs = true} end
  local was, now = lines(old.rec), lines(rec)
  local own = was[2] ~= now[2] or was[3] ~= now[3] or was[6] ~= now[6]
  local ctx = was[4] ~= now[4] or was[5] ~= now[5]
  return {c = own, s = own, xs = own or ctx}
end

local function put_one(id, version, ttl)
  local n_hash = tonumber(ARGV[i]); i = i + 1
  local hash_at = i
  i = i + n_hash * 2
  local rec = ARGV[i]; i = i + 1
  local new_lens = {c = 0, s = 0, xs = 0}
  if rec ~= '' then new_lens = record_lengths(rec) end

  local current = tonumber(redis.call('HGET', base .. 'ver', id))
  if current and current > version then return 'stale' end
  -- The first write of the call, as ever: on a full Redis (maxmemory, noeviction) it is
  -- refused before anything changed (once a script has written, Redis lets it go on).
  redis.call('HSET', base .. 'ver', id, version)

  local mkey = base .. 'm:' .. id
  local op = 'delete'
  -- Recalls bump access counts here first and in the database later (memories.access), so
  -- the row being mirrored may be behind this hash: the larger count, and its time, stay.
  local seen = redis.call('HMGET', mkey, 'access_count', 'accessed_at')
  redis.call('DEL', mkey)
  if n_hash > 0 then
    op = 'upsert'
    hset_args(mkey, hash_at, n_hash)
    if tonumber(seen[1]) and tonumber(seen[1]) > (tonumber(redis.call('HGET', mkey, 'access_count')) or 0) then
      redis.call('HSET', mkey, 'access_count', seen[1], 'accessed_at', seen[2])
    end
    if ttl > 0 then redis.call('EXPIRE', mkey, ttl) end
    ids_added[#ids_added + 1] = id
  else
    ids_removed[#ids_removed + 1] = id
  end

  -- The field documents this write changed (terms, length or filter fields), listed in its
  -- stream entry ('f'): a serving index of another field need not read this memory again
  -- (a next turn that extends a memory's context changes its context field alone).
  local changed = {}
  for _, sfx in ipairs(targets) do
    local rkey = base .. 'v' .. sfx .. ':d:' .. id
    local old = take_old(sfx, id, rkey)
    local differs = changed_fields(old, rec)
    if rec ~= '' then
      redis.call('SET', rkey, rec)
      if not known['v' .. sfx] then
        known['v' .. sfx] = true
        redis.call('SADD', base .. 'fields', 'v' .. sfx)
      end
    elseif old then
      redis.call('DEL', rkey)
    end
    for _, field in ipairs(FIELDS) do
      local fname = field .. sfx
      local was = old and old.lens[field] or 0
      local now = new_lens[field]
      if was > 0 then bump(n_delta, fname, -1); bump(len_delta, fname, -was) end
      if now > 0 then bump(n_delta, fname, 1); bump(len_delta, fname, now) end
      if (was > 0 or now > 0) and (differs[field] or was ~= now) then
        changed[#changed + 1] = fname
      end
    end
  end

  -- A removed memory leaves `ids`, which is how a generation's records are found when it is
  -- deleted (search.index.generations): its record in a generation no longer written (one
  -- a reindex just swapped out, or a builder left half-built) goes now, or never.
  if rec == '' then
    for name in pairs(known) do
      local sfx = string.match(name, '^v(.*)$')
      local target = false
      for _, t in ipairs(targets) do if t == sfx then target = true end end
      if sfx and not target then redis.call('DEL', base .. name .. ':d:' .. id) end
    end
  end

  if mode == 'write' then
    local entry = {'op', op, 'id', id, 'version', version}
    if op == 'upsert' then
      entry[7], entry[8] = 'f', table.concat(changed, ',')
    end
    redis.call('XADD', base .. 'stream', 'MAXLEN', '~', maxlen, '*', unpack(entry))
  end
  return op
end

for n = 1, n_memories do
  local id, version, ttl = ARGV[i], tonumber(ARGV[i + 1]), tonumber(ARGV[i + 2])
  i = i + 3
  ops[n] = put_one(id, version, ttl)
end

for fname, dn in pairs(n_delta) do
  local skey = base .. fname .. ':stats'
  if dn ~= 0 then redis.call('HINCRBY', skey, 'N', dn) end
  if len_delta[fname] ~= 0 then redis.call('HINCRBY', skey, 'total_len', len_delta[fname]) end
end
if #ids_added > 0 then many('SADD', base .. 'ids', ids_added, 1000) end
if #ids_removed > 0 then many('SREM', base .. 'ids', ids_removed, 1000) end
return ops
