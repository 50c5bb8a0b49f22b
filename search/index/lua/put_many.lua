-- Add several new memories of one namespace to the index and hot store, atomically: the
-- bulk path (memories.mirror, memory_create_many) for memories Redis has never held. Leaves
-- exactly what put.lua leaves for the same memories (tests/test_put_many.py), with far fewer
-- commands: the call's postings come grouped by term, so one ZADD per (field, term) carries
-- every memory of the call that holds the term, and the term registry, document registry,
-- versions and statistics change once per call. (Run after lib.lua: suffix, many,
-- posting_score.)
-- KEYS[1]: the namespace's hash key of the first memory (routes the script to its slot).
-- ARGV: base, avgdl_ref_default, k1_ref, b_ref, stream_maxlen, format, n_memories, then per
--       memory: memory_id, version, ttl_seconds (0 = none), n_hash_pairs, hash pairs...,
--       n_meta_pairs, meta pairs..., n_fields, then per field: name, dl;
--       then n_fields (of the call), per field: name, n_terms, then per term: term,
--       n_postings, then per posting: memory number (1-based, in the call), tf.
-- A document vector holds what put.lua's holds (its fields may come in another order: the
-- order of the call's terms).
--
-- Nothing is written, and the reply is {'fallback'}, when put.lua must do the work: a
-- memory of the call already has a version in Redis (a retried or repeated put: put.lua
-- takes its old postings out), or a reindex is building a generation (put.lua writes both).
-- Otherwise one op per memory, each 'upsert'. The caller bounds the work of one call
-- (search.index.postings.PUT_MANY_POSTINGS_PER_CALL).
local base = ARGV[1]
local ref_default, k1, b = tonumber(ARGV[2]), tonumber(ARGV[3]), tonumber(ARGV[4])
local maxlen, format, n_memories = ARGV[5], ARGV[6], tonumber(ARGV[7])

if redis.call('EXISTS', base .. 'building') == 1 then return {'fallback'} end

-- The memories' headers first, so the version check comes before any write.
local i = 8
local mems = {}
local ids = {}
for n = 1, n_memories do
  local m = {id = ARGV[i], version = ARGV[i + 1], ttl = tonumber(ARGV[i + 2])}
  i = i + 3
  local n_hash = tonumber(ARGV[i]); m.hash_at = i + 1; m.n_hash = n_hash
  i = i + 1 + n_hash * 2
  local n_meta = tonumber(ARGV[i]); m.meta_at = i + 1; m.n_meta = n_meta
  m.exp = ''
  for j = i + 1, i + n_meta * 2, 2 do if ARGV[j] == '#exp' then m.exp = ARGV[j + 1] end end
  i = i + 1 + n_meta * 2
  local n_fields = tonumber(ARGV[i]); i = i + 1
  m.dl = {}
  for _ = 1, n_fields do
    m.dl[ARGV[i]] = tonumber(ARGV[i + 1])
    i = i + 2
  end
  mems[n] = m
  ids[n] = m.id
end
local held = redis.call('HMGET', base .. 'ver', unpack(ids))
for n = 1, n_memories do
  if held[n] then return {'fallback'} end
end

local sfx = suffix(redis.call('GET', base .. 'gen') or '0')

-- A namespace's first put stamps it with the caller's format (as put.lua does).
if redis.call('EXISTS', base .. 'ver') == 0 then
  redis.call('SET', base .. 'format', format, 'NX')
end

-- The first write of the call: on a full Redis (maxmemory, noeviction) it is refused before
-- anything changed (once a script has written, Redis lets it go on).
local versions = {}
for n = 1, n_memories do
  versions[#versions + 1] = mems[n].id
  versions[#versions + 1] = mems[n].version
end
many('HSET', base .. 'ver', versions, 2000)

local ops = {}
for n = 1, n_memories do
  local m = mems[n]
  local mkey = base .. 'm:' .. m.id
  redis.call('DEL', mkey)
  redis.call('HSET', mkey, unpack(ARGV, m.hash_at, m.hash_at + m.n_hash * 2 - 1))
  if m.ttl > 0 then redis.call('EXPIRE', mkey, m.ttl) end
  ops[n] = 'upsert'
end

local fields_key = base .. 'fields'
local known = {}
for _, fname in ipairs(redis.call('SMEMBERS', fields_key)) do known[fname] = true end

local n_groups = tonumber(ARGV[i]); i = i + 1
for _ = 1, n_groups do
  local field, n_terms = ARGV[i], tonumber(ARGV[i + 1])
  i = i + 2
  local fname = field .. sfx
  if not known[fname] then
    known[fname] = true
    redis.call('SADD', fields_key, fname)
  end
  local skey = base .. fname .. ':stats'
  local ref = tonumber(redis.call('HGET', skey, 'avgdl_ref'))
  if not ref then
    ref = ref_default
    redis.call('HSET', skey, 'avgdl_ref', ref)
  end
  -- Per memory of the field: its BM25 length norm and its document vector so far.
  local norms, docs = {}, {}
  local n_docs, total = 0, 0
  for n = 1, n_memories do
    local dl = mems[n].dl[field]
    if dl then
      norms[n] = k1 * (1 - b + b * dl / ref)
      local doc = {'#dl', dl}
      local m = mems[n]
      for j = m.meta_at, m.meta_at + m.n_meta * 2 - 1 do doc[#doc + 1] = ARGV[j] end
      docs[n] = doc
      n_docs = n_docs + 1
      total = total + dl
    end
  end
  local head = base .. fname .. ':t:'
  local terms = {}
  for t = 1, n_terms do
    local term, n_postings = ARGV[i], tonumber(ARGV[i + 1])
    i = i + 2
    terms[t] = term
    local adds = {}
    for _ = 1, n_postings do
      local n, tf = tonumber(ARGV[i]), tonumber(ARGV[i + 1])
      i = i + 2
      adds[#adds + 1] = posting_score(tf, mems[n].dl[field], norms[n])
      adds[#adds + 1] = mems[n].id
      local doc = docs[n]
      doc[#doc + 1] = term
      doc[#doc + 1] = tf
    end
    many('ZADD', head .. term, adds, 2000)
  end
  many('SADD', base .. fname .. ':terms', terms, 1000)
  local doc_ids, exps = {}, {}
  for n = 1, n_memories do
    local doc = docs[n]
    if doc then
      local m = mems[n]
      local dkey = base .. fname .. ':d:' .. m.id
      many('HSET', dkey, doc, 2000)
      doc_ids[#doc_ids + 1] = m.id
      if m.exp ~= '' then
        exps[#exps + 1] = tonumber(m.exp)
        exps[#exps + 1] = m.id
      end
    end
  end
  many('SADD', base .. fname .. ':docs', doc_ids, 1000)
  if #exps > 0 then many('ZADD', base .. fname .. ':exp', exps, 2000) end
  redis.call('HINCRBY', skey, 'N', n_docs)
  redis.call('HINCRBY', skey, 'total_len', total)
end

many('SADD', base .. 'ids', ids, 1000)
for n = 1, n_memories do
  redis.call('XADD', base .. 'stream', 'MAXLEN', '~', maxlen, '*', 'op', 'upsert',
             'id', mems[n].id, 'version', mems[n].version)
end
return ops
