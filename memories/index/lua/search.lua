-- Top-k BM25 over one index field of one namespace, exact (Lucene 8+ BM25Similarity).
-- KEYS[1]: the field's stats key (routes the script to the namespace's slot).
-- ARGV: base, field, k, k1, b, mode ('any' | 'all' | 'collect'), now (epoch seconds),
--       conversation_id ('' = none), types ('' = all, else ',type,type,'), n_terms, terms...
--
-- 'any' and 'all' walk impact-ordered postings best-first in growing batches and stop when
-- the k-th exact score reaches the bound of every unseen document (threshold algorithm):
-- an unseen document's live tf part is at most frontier * max(1, avgdl / avgdl_ref), so the
-- top k are exact while scores use live N, df and avgdl. When k1/b differ from the values the
-- impacts were computed with, the bound does not hold and the caller uses 'collect', which
-- returns every matching document unranked for the caller to score.
-- Reply: {N, total_len, {df...}, {{id, dl, {tf...}, exp}...}, {expired ids...}}
local base, field = ARGV[1], ARGV[2]
local k, k1, b, mode = tonumber(ARGV[3]), tonumber(ARGV[4]), tonumber(ARGV[5]), ARGV[6]
local now, conv, types = tonumber(ARGV[7]), ARGV[8], ARGV[9]
local n_terms = tonumber(ARGV[10])
local terms = {}
for j = 1, n_terms do terms[j] = ARGV[10 + j] end

local skey = base .. field .. ':stats'
local st = redis.call('HMGET', skey, 'N', 'total_len', 'avgdl_ref')
local N, total = tonumber(st[1]) or 0, tonumber(st[2]) or 0
local dfs, idf, pkeys = {}, {}, {}
for j = 1, n_terms do
  pkeys[j] = base .. field .. ':t:' .. terms[j]
  dfs[j] = redis.call('ZCARD', pkeys[j])
  idf[j] = math.log(1 + (N - dfs[j] + 0.5) / (dfs[j] + 0.5))
end
if N == 0 then return {0, 0, dfs, {}, {}} end
local avgdl = total / N
local scale = math.max(1, avgdl / (tonumber(st[3]) or avgdl))

local dprefix = base .. field .. ':d:'
local seen, top, expired = {}, {}, {}

-- Exact score of one candidate, or nil when filtered out or not matching the mode.
local function score(id)
  local fields = {'#dl', '#type', '#conv', '#exp'}
  for j = 1, n_terms do fields[4 + j] = terms[j] end
  local v = redis.call('HMGET', dprefix .. id, unpack(fields))
  if not v[1] then return nil end
  if v[4] and v[4] ~= '' and tonumber(v[4]) <= now then
    expired[#expired + 1] = id
    return nil
  end
  if types ~= '' and not string.find(types, ',' .. v[2] .. ',', 1, true) then return nil end
  if conv ~= '' and v[3] ~= '' and v[3] ~= conv and v[2] ~= 'long_term' then return nil end
  local dl = tonumber(v[1])
  local norm = k1 * (1 - b + b * dl / avgdl)
  local s, tfs, matched = 0, {}, 0
  for j = 1, n_terms do
    local tf = tonumber(v[4 + j]) or 0
    tfs[j] = tf
    if tf > 0 then
      matched = matched + 1
      s = s + idf[j] * tf / (tf + norm)
    end
  end
  if mode == 'all' and matched < n_terms then return nil end
  return s, {id, dl, tfs}
end

-- Keep `top` sorted by score desc, memory_id asc, at most k long.
local function offer(s, row)
  local n = #top
  if n >= k then
    local last = top[n]
    if s < last[1] or (s == last[1] and row[1] > last[2][1]) then return end
  end
  local pos = n + 1
  while pos > 1 do
    local prev = top[pos - 1]
    if prev[1] > s or (prev[1] == s and prev[2][1] < row[1]) then break end
    pos = pos - 1
  end
  table.insert(top, pos, {s, row})
  if #top > k then top[#top] = nil end
end

local function consider(id)
  if seen[id] then return end
  seen[id] = true
  local s, row = score(id)
  if s then
    if mode == 'collect' then top[#top + 1] = {s, row} else offer(s, row) end
  end
end

local walk = {}
if mode == 'all' then
  -- Every result is in the rarest list: walk only it, the others are looked up.
  local rarest = 1
  for j = 2, n_terms do if dfs[j] < dfs[rarest] then rarest = j end end
  walk[1] = rarest
  if dfs[rarest] == 0 then return {N, total, dfs, {}, {}} end
else
  for j = 1, n_terms do if dfs[j] > 0 then walk[#walk + 1] = j end end
end

local pos, frontier, done = {}, {}, {}
for _, j in ipairs(walk) do pos[j] = 0; frontier[j] = 1 end
local batch = math.max(32, k * 2)
if mode ~= 'any' then batch = 1000000000 end
while true do
  local active = 0
  for _, j in ipairs(walk) do
    if not done[j] then
      local items = redis.call('ZRANGE', pkeys[j], pos[j], pos[j] + batch - 1, 'WITHSCORES')
      local got = #items / 2
      pos[j] = pos[j] + got
      if got < batch then
        done[j] = true
        frontier[j] = 0
      else
        frontier[j] = -tonumber(items[#items])
        active = active + 1
      end
      for m = 1, #items, 2 do consider(items[m]) end
    end
  end
  if active == 0 then break end
  if #top >= k then
    local bound = 0
    for _, j in ipairs(walk) do bound = bound + idf[j] * frontier[j] * scale end
    local kth = top[k][1]
    -- With one walked term, unseen documents at the frontier have larger ids and lose ties.
    if kth > bound or (#walk == 1 and kth >= bound) then break end
  end
  batch = math.min(batch * 2, 4096)
end

local out = {}
for n, entry in ipairs(top) do out[n] = entry[2] end
return {N, total, dfs, out, expired}
