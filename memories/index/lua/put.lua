-- Replace one memory in the index and hot store, atomically.
-- KEYS[1]: the namespace's memory hash key (routes the script to the namespace's slot).
-- ARGV: base, memory_id, avgdl_ref_default, k1_ref, b_ref, ttl_seconds (0 = none),
--       stream_maxlen, n_hash_pairs, hash pairs..., n_meta_pairs, meta pairs...,
--       n_fields, then per field: name, dl, n_terms, term/tf pairs...
-- An empty field list (n_fields = 0) with n_hash_pairs = 0 removes the memory entirely.
-- Every key used is built from `base`, so all share the namespace's hash tag.
local base, id = ARGV[1], ARGV[2]
local ref_default, k1, b = tonumber(ARGV[3]), tonumber(ARGV[4]), tonumber(ARGV[5])
local ttl, maxlen = tonumber(ARGV[6]), ARGV[7]
local i = 8

local function remove_field(field)
  local dkey = base .. field .. ':d:' .. id
  local old = redis.call('HGETALL', dkey)
  if #old == 0 then return end
  local skey = base .. field .. ':stats'
  for j = 1, #old, 2 do
    local term = old[j]
    if string.sub(term, 1, 1) == '#' then
      if term == '#dl' then
        redis.call('HINCRBY', skey, 'N', -1)
        redis.call('HINCRBY', skey, 'total_len', -tonumber(old[j + 1]))
      end
    else
      redis.call('ZREM', base .. field .. ':t:' .. term, id)
    end
  end
  redis.call('DEL', dkey)
  redis.call('ZREM', base .. field .. ':exp', id)
end

-- Old state out: every field this memory was indexed under.
local fields_key = base .. 'fields'
for _, field in ipairs(redis.call('SMEMBERS', fields_key)) do remove_field(field) end

local mkey = base .. 'm:' .. id
redis.call('DEL', mkey)
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
if n_hash > 0 then
  op = 'upsert'
  redis.call('HSET', mkey, unpack(hash))
  if ttl > 0 then redis.call('EXPIRE', mkey, ttl) end
  redis.call('SADD', base .. 'ids', id)
else
  redis.call('SREM', base .. 'ids', id)
end

local n_fields = tonumber(ARGV[i]); i = i + 1
for _ = 1, n_fields do
  local field, dl, n_terms = ARGV[i], tonumber(ARGV[i + 1]), tonumber(ARGV[i + 2])
  i = i + 3
  redis.call('SADD', fields_key, field)
  if n_terms > 0 then
    local skey = base .. field .. ':stats'
    local ref = tonumber(redis.call('HGET', skey, 'avgdl_ref'))
    if not ref then
      ref = ref_default
      redis.call('HSET', skey, 'avgdl_ref', ref)
    end
    local norm = k1 * (1 - b + b * dl / ref)
    local dkey = base .. field .. ':d:' .. id
    local doc = {'#dl', dl}
    for j = 1, #meta do doc[#doc + 1] = meta[j] end
    for _ = 1, n_terms do
      local term, tf = ARGV[i], tonumber(ARGV[i + 1])
      i = i + 2
      -- Posting score: -(level + code / 2^34), where level = floor(impact * 2^16) is the tf
      -- part under the reference statistics and code = tf * 2^17 + (2^17 - 1 - dl) carries
      -- the raw tf and dl, so a reader scores the posting exactly from the score alone.
      -- Negated so ZRANGE walks best-first; equal scores come in ascending memory_id order.
      local level = math.floor(tf / (tf + norm) * 65536)
      local code = tf * 131072 + (131071 - dl)
      redis.call('ZADD', base .. field .. ':t:' .. term, -(level + code / 17179869184), id)
      doc[#doc + 1] = term
      doc[#doc + 1] = tf
    end
    redis.call('HSET', dkey, unpack(doc))
    if exp ~= '' then redis.call('ZADD', base .. field .. ':exp', tonumber(exp), id) end
    redis.call('HINCRBY', skey, 'N', 1)
    redis.call('HINCRBY', skey, 'total_len', dl)
  end
end

redis.call('XADD', base .. 'stream', 'MAXLEN', '~', maxlen, '*', 'op', op, 'id', id)
return op
