-- Replace one or more memories of one namespace in the index and hot store, atomically.
-- KEYS[1]: the namespace's hash key of the first memory (routes the script to its slot).
-- ARGV: base, mode ('write' | 'build'), avgdl_ref_default, k1_ref, b_ref, stream_maxlen,
--       format (the caller's index format stamp), n_memories, then per memory:
--       memory_id, version, ttl_seconds (0 = none), n_hash_pairs, hash pairs...,
--       n_meta_pairs, meta pairs..., n_fields, then per field: name, dl, n_terms,
--       term/tf pairs...
-- Memory ids are distinct within one call. No hash pairs and no fields remove a memory
-- (forget, purge, expiry). Returns one op per memory: 'upsert', 'delete' or 'stale'.
--
-- Generations: the live index of a namespace is generation `gen` (field keys `c:…` for 0,
-- `c@N:…` for N); while a reindex builds generation `building`, 'write' updates both, and the
-- builder's 'build' puts touch only the new one. `ver` holds the last version put per memory:
-- an older version never overwrites a newer one (a slow sync, or the builder's snapshot).
-- Every key is built from `base`, so all share the namespace's hash tag. Each field of a
-- generation records the terms it has postings for (`<field>:terms`) and the memories it
-- has a document vector for (`<field>:docs`): deleting a generation then never scans.
--
-- Several memories per call (a bulk load): each memory's old postings go out as it is
-- read, its new postings are gathered and written at the end, one ZADD per term for all the
-- memories of the call (with distinct ids, removals and additions of different memories
-- commute), and the statistics and registries change once per call. The caller
-- bounds the work of one call (search.index.postings.PUT_POSTINGS_PER_CALL).
local base, mode = ARGV[1], ARGV[2]
local ref_default, k1, b = tonumber(ARGV[3]), tonumber(ARGV[4]), tonumber(ARGV[5])
local maxlen, format, n_memories = ARGV[6], ARGV[7], tonumber(ARGV[8])
local i = 9

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

local function in_targets(fname)
  local at = string.find(fname, '@', 1, true)
  local sfx = at and string.sub(fname, at) or ''
  for _, t in ipairs(targets) do if t == sfx then return true end end
  return false
end

local fields_key = base .. 'fields'
local indexed = redis.call('SMEMBERS', fields_key)
local known = {}
for _, fname in ipairs(indexed) do known[fname] = true end

-- Gathered per call, written at the end.
local n_delta, len_delta = {}, {}   -- fname -> change of N / total_len
local adds, add_keys = {}, {}       -- postings key -> {score, id, ...}; keys in first-seen order
local new_terms = {}                -- fname -> {term, ...}
local seen_terms = {}               -- fname -> {term = true}
local docs_added, exp_added = {}, {} -- fname -> {id, ...} / {score, id, ...}
local ids_added, ids_removed = {}, {}
local refs = {}                     -- fname -> avgdl_ref
local ops = {}

local function bump(t, k, v) t[k] = (t[k] or 0) + v end
local function push(t, k, ...)
  local list = t[k]
  if not list then list = {}; t[k] = list end
  for _, v in ipairs({...}) do list[#list + 1] = v end
end

-- Commands with many arguments, in slices (Lua's unpack takes a few thousand at most).
local function many(cmd, key, list, step)
  for s = 1, #list, step do
    local e = math.min(#list, s + step - 1)
    redis.call(cmd, key, unpack(list, s, e))
  end
end

-- A memory's old document vector of one field: read and taken out (the vector, its entry in
-- the field's registries, its share of the statistics); its postings stay until the new
-- vector is known (put_one): a posting whose tf and dl are unchanged stays as it is, a
-- changed one is overwritten by the final ZADD, and only terms the memory lost are removed.
-- A next turn that only rebuilds a memory's context rewrites neither its own-content fields
-- nor any posting of a term whose tf and dl stayed the same.
local function take_field(fname, id)
  local dkey = base .. fname .. ':d:' .. id
  local old = redis.call('HGETALL', dkey)
  if #old == 0 then return nil end
  local tf, dl, meta = {}, nil, {}
  for j = 1, #old, 2 do
    local term = old[j]
    if string.sub(term, 1, 1) == '#' then
      if term == '#dl' then dl = tonumber(old[j + 1]) else meta[term] = old[j + 1] end
    else
      tf[term] = tonumber(old[j + 1])
    end
  end
  if dl then
    bump(n_delta, fname, -1)
    bump(len_delta, fname, -dl)
  end
  redis.call('DEL', dkey)
  redis.call('SREM', base .. fname .. ':docs', id)
  redis.call('ZREM', base .. fname .. ':exp', id)
  return {tf = tf, dl = dl, meta = meta}
end

local function ref_of(fname)
  local ref = refs[fname]
  if ref then return ref end
  ref = tonumber(redis.call('HGET', base .. fname .. ':stats', 'avgdl_ref'))
  if not ref then
    ref = ref_default
    redis.call('HSET', base .. fname .. ':stats', 'avgdl_ref', ref)
  end
  refs[fname] = ref
  return ref
end

local function put_one(id, version, ttl)
  local n_hash = tonumber(ARGV[i]); i = i + 1
  local hash_at = i
  i = i + n_hash * 2
  local n_meta = tonumber(ARGV[i]); i = i + 1
  local meta, exp = {}, ''
  for j = 1, n_meta * 2 do meta[j] = ARGV[i + j - 1] end
  for j = 1, n_meta * 2, 2 do if meta[j] == '#exp' then exp = meta[j + 1] end end
  i = i + n_meta * 2
  local n_fields = tonumber(ARGV[i]); i = i + 1
  local fields_at = i
  for _ = 1, n_fields do i = i + 3 + tonumber(ARGV[i + 2]) * 2 end

  local current = tonumber(redis.call('HGET', base .. 'ver', id))
  if current and current > version then return 'stale' end
  -- The first write of the call, as ever: on a full Redis (maxmemory, noeviction) it is
  -- refused before anything changed (once a script has written, Redis lets it go on).
  redis.call('HSET', base .. 'ver', id, version)

  -- Old state out: every field name this memory was indexed under, in the target generations.
  local before = {}
  for fname in pairs(known) do
    if in_targets(fname) then before[fname] = take_field(fname, id) end
  end

  local mkey = base .. 'm:' .. id
  local op = 'delete'
  -- Recalls bump access counts here first and in the database later (memories.access), so
  -- the row being mirrored may be behind this hash: the larger count, and its time, stay.
  local seen = redis.call('HMGET', mkey, 'access_count', 'accessed_at')
  redis.call('DEL', mkey)
  if n_hash > 0 then
    op = 'upsert'
    local hash = {}
    for j = 1, n_hash * 2 do hash[j] = ARGV[hash_at + j - 1] end
    redis.call('HSET', mkey, unpack(hash))
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
  local changed, written = {}, {}
  local f = fields_at
  for _ = 1, n_fields do
    local field, dl, n_terms = ARGV[f], tonumber(ARGV[f + 1]), tonumber(ARGV[f + 2])
    local first = f + 3
    f = first + n_terms * 2
    for _, sfx in ipairs(targets) do
      local fname = field .. sfx
      if not known[fname] then
        known[fname] = true
        redis.call('SADD', fields_key, fname)
      end
      local norm = k1 * (1 - b + b * dl / ref_of(fname))
      local doc = {'#dl', dl}
      for j = 1, #meta do doc[#doc + 1] = meta[j] end
      local head = base .. fname .. ':t:'
      local seen_here = seen_terms[fname]
      if not seen_here then seen_here = {}; seen_terms[fname] = seen_here end
      local prev = before[fname]
      local old_tf = prev and prev.tf or {}
      local same_dl = prev ~= nil and prev.dl == dl
      local same = same_dl
      if same then
        local n_old = 0
        for _ in pairs(prev.meta) do n_old = n_old + 1 end
        same = n_old * 2 == #meta
        for j = 1, #meta, 2 do
          if prev.meta[meta[j]] ~= meta[j + 1] then same = false end
        end
      end
      for t = first, first + n_terms * 2 - 1, 2 do
        local term, tf = ARGV[t], tonumber(ARGV[t + 1])
        local unchanged = same_dl and old_tf[term] == tf
        if not unchanged then same = false end
        old_tf[term] = nil  -- kept: not among the postings removed below
        -- Posting score: -(level + code / 2^34), where level = floor(impact * 2^16) is the tf
        -- part under the reference statistics and code = tf * 2^17 + (2^17 - 1 - dl) carries
        -- the raw tf and dl, so a reader scores the posting exactly from the score alone.
        -- Negated so ZRANGE walks best-first; equal scores come in ascending memory_id order.
        local level = math.floor(tf / (tf + norm) * 65536)
        local code = tf * 131072 + (131071 - dl)
        local key = head .. term
        if not unchanged then
          if not adds[key] then add_keys[#add_keys + 1] = key end
          push(adds, key, -(level + code / 17179869184), id)
        end
        if not seen_here[term] then
          seen_here[term] = true
          push(new_terms, fname, term)
        end
        doc[#doc + 1] = term
        doc[#doc + 1] = tf
      end
      if next(old_tf) ~= nil then same = false end  -- a term the memory lost
      if not same then changed[#changed + 1] = fname end
      written[fname] = true
      redis.call('HSET', base .. fname .. ':d:' .. id, unpack(doc))
      push(docs_added, fname, id)
      if exp ~= '' then push(exp_added, fname, tonumber(exp), id) end
      bump(n_delta, fname, 1)
      bump(len_delta, fname, dl)
    end
  end

  -- The postings of terms the memory no longer has (all of them for a removed memory or a
  -- field it lost). A term left without postings leaves the field's registry too: the
  -- registry names no word that no memory holds (a purged memory's words go with it); a
  -- memory of this call that adds it back registers it again at the end.
  for fname, prev in pairs(before) do
    local head = base .. fname .. ':t:'
    for term in pairs(prev.tf) do
      redis.call('ZREM', head .. term, id)
      if redis.call('EXISTS', head .. term) == 0 then
        redis.call('SREM', base .. fname .. ':terms', term)
      end
    end
    if not written[fname] then changed[#changed + 1] = fname end
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

for _, key in ipairs(add_keys) do many('ZADD', key, adds[key], 2000) end
for fname, terms in pairs(new_terms) do many('SADD', base .. fname .. ':terms', terms, 1000) end
for fname, ids in pairs(docs_added) do many('SADD', base .. fname .. ':docs', ids, 1000) end
for fname, list in pairs(exp_added) do many('ZADD', base .. fname .. ':exp', list, 2000) end
for fname, dn in pairs(n_delta) do
  local skey = base .. fname .. ':stats'
  if dn ~= 0 then redis.call('HINCRBY', skey, 'N', dn) end
  if len_delta[fname] ~= 0 then redis.call('HINCRBY', skey, 'total_len', len_delta[fname]) end
end
if #ids_added > 0 then many('SADD', base .. 'ids', ids_added, 1000) end
if #ids_removed > 0 then many('SREM', base .. 'ids', ids_removed, 1000) end
return ops
