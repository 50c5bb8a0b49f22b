-- Top-k BM25 over one index field of one namespace, exact (Lucene 8+ BM25Similarity).
-- KEYS[1]: the field's stats key (routes the script to the namespace's slot).
-- ARGV: base, field, k, k1, b, mode ('any' | 'all' | 'collect'), now (epoch seconds),
--       conversation_id ('' = none), types ('' = all, else ',type,type,'), n_terms, terms...
--
-- Postings are impact-ordered (put.lua): each score holds the impact level under the
-- reference average length and the raw tf and dl, so a posting is scored exactly, with live
-- N, df and avgdl, from its score alone. 'any' and 'all' walk the lists best-first in growing
-- batches (threshold algorithm with MaxScore): a list whose best possible contribution cannot
-- lift a document into the top k on its own is not walked, only probed; the documents of
-- each batch are probed in the other lists with one ZMSCORE per list. The walk stops when the
-- k-th exact score beats the bound of every unseen document: in a walked list that is
-- (level + 1) / 2^16 of the frontier times max(1, avgdl / avgdl_ref), since the live tf part
-- of a document is at most its reference impact times that factor.
-- 'collect' walks every list fully and returns every match unranked (for other formulas).
-- Reply: {N, total_len, {df...}, {{id, dl, {tf...}}...}, {expired ids...}}
local base, field = ARGV[1], ARGV[2]
local k, k1, b, mode = tonumber(ARGV[3]), tonumber(ARGV[4]), tonumber(ARGV[5]), ARGV[6]
local now, conv, types = tonumber(ARGV[7]), ARGV[8], ARGV[9]
local n_terms = tonumber(ARGV[10])
local terms = {}
for j = 1, n_terms do terms[j] = ARGV[10 + j] end

local LEVELS, CODE = 65536, 17179869184
-- The live generation of the index (see put.lua).
local gen = redis.call('GET', base .. 'gen')
if gen and gen ~= '0' then field = field .. '@' .. gen end
local fbase = base .. field
local st = redis.call('HMGET', fbase .. ':stats', 'N', 'total_len', 'avgdl_ref')
local N, total = tonumber(st[1]) or 0, tonumber(st[2]) or 0
local dfs, idf, pkeys, maxup = {}, {}, {}, {}
for j = 1, n_terms do
  pkeys[j] = fbase .. ':t:' .. terms[j]
  dfs[j] = redis.call('ZCARD', pkeys[j])
end

-- Short-term memories past their expiry are skipped (and reported for removal), and leave
-- the statistics before scoring: N, total_len and df count only what has not expired.
local expired, dead = {}, {}
for _, id in ipairs(redis.call('ZRANGEBYSCORE', fbase .. ':exp', '-inf', now)) do
  dead[id] = true
  expired[#expired + 1] = id
  local dkey = fbase .. ':d:' .. id
  local dl = tonumber(redis.call('HGET', dkey, '#dl'))
  if dl then
    N, total = N - 1, total - dl
    for j = 1, n_terms do
      if redis.call('HEXISTS', dkey, terms[j]) == 1 then dfs[j] = dfs[j] - 1 end
    end
  end
end
for j = 1, n_terms do
  idf[j] = math.log(1 + (N - dfs[j] + 0.5) / (dfs[j] + 0.5))
end
if N <= 0 then return {0, 0, dfs, {}, expired} end
local avgdl = total / N
local scale = math.max(1, avgdl / (tonumber(st[3]) or avgdl))

-- A posting score -> level, tf, dl.
local function decode(score)
  local v = -tonumber(score)
  local level = math.floor(v)
  local code = math.floor((v - level) * CODE + 0.5)
  local tf = math.floor(code / 131072)
  return level, tf, 131071 - (code - tf * 131072)
end

local function part(j, tf, dl)
  return idf[j] * tf / (tf + k1 * (1 - b + b * dl / avgdl))
end

-- Type and conversation filters, looked up only for documents that would enter the top k.
local allowed = {}
local function admits(id)
  if conv == '' and types == '' then return true end
  local ok = allowed[id]
  if ok == nil then
    local v = redis.call('HMGET', base .. field .. ':d:' .. id, '#type', '#conv')
    ok = v[1] ~= false
      and (types == '' or string.find(types, ',' .. v[1] .. ',', 1, true) ~= nil)
      and (conv == '' or v[2] == '' or v[2] == conv or v[1] == 'long_term')
    allowed[id] = ok
  end
  return ok
end

-- `top` sorted by score desc, memory_id asc, at most k long.
local top = {}
local function offer(s, row)
  local n = #top
  if n >= k then
    local last = top[n]
    if s < last[1] or (s == last[1] and row[1] > last[2][1]) then return end
  end
  if not admits(row[1]) then return end
  local pos = n + 1
  while pos > 1 do
    local prev = top[pos - 1]
    if prev[1] > s or (prev[1] == s and prev[2][1] < row[1]) then break end
    pos = pos - 1
  end
  table.insert(top, pos, {s, row})
  if #top > k then top[#top] = nil end
end

local seen = {}
-- Score the documents of one batch of list `w`: their tf in every other list by ZMSCORE.
-- Hot loop: plain arrays, and a row table only for documents that enter the top k.
local function score_batch(w, items)
  local ids, score, count, dls, tfw = {}, {}, {}, {}, {}
  local n = 0
  for m = 1, #items, 2 do
    local id = items[m]
    if not seen[id] and not dead[id] then
      seen[id] = true
      local _, tf, dl = decode(items[m + 1])
      n = n + 1
      ids[n], dls[n], tfw[n], count[n] = id, dl, tf, 1
      score[n] = part(w, tf, dl)
    end
  end
  if n == 0 then return end
  local other = {}
  for j = 1, n_terms do
    if j ~= w and dfs[j] > 0 then
      local scores = redis.call('ZMSCORE', pkeys[j], unpack(ids))
      local tfj = {}
      for r = 1, n do
        local sc = scores[r]
        if sc then
          local _, tf = decode(sc)
          tfj[r] = tf
          score[r] = score[r] + part(j, tf, dls[r])
          count[r] = count[r] + 1
        end
      end
      other[j] = tfj
    end
  end
  for r = 1, n do
    local s = score[r]
    local keep
    if mode == 'collect' then
      keep = true
    elseif mode == 'all' and count[r] < n_terms then
      keep = false
    else
      keep = #top < k or s > top[k][1] or (s == top[k][1] and ids[r] < top[k][2][1])
    end
    if keep then
      local tfs = {}
      for j = 1, n_terms do
        if j == w then tfs[j] = tfw[r] else tfs[j] = (other[j] and other[j][r]) or 0 end
      end
      local row = {ids[r], dls[r], tfs}
      if mode == 'collect' then
        if admits(ids[r]) then top[#top + 1] = {s, row} end
      else
        offer(s, row)
      end
    end
  end
end

local pos, frontier, done = {}, {}, {}
for j = 1, n_terms do
  pos[j] = 0
  done[j] = dfs[j] == 0
  if done[j] then
    frontier[j], maxup[j] = 0, 0
  else
    local first = redis.call('ZRANGE', pkeys[j], 0, 0, 'WITHSCORES')
    maxup[j] = (decode(first[2]) + 1) / LEVELS
    frontier[j] = maxup[j]
  end
end

local rarest = nil
if mode == 'all' then
  -- Every result is in the rarest list: walk only it, probe the others.
  for j = 1, n_terms do
    if rarest == nil or dfs[j] < dfs[rarest] then rarest = j end
  end
  if dfs[rarest] == 0 then return {N, total, dfs, {}, {}} end
end

-- Upper bound of a document not yet seen, and which lists are worth walking.
local function bound_and_walk()
  local walk, bound = {}, 0
  if mode == 'all' then
    for j = 1, n_terms do
      bound = bound + idf[j] * (j == rarest and frontier[j] or maxup[j]) * scale
    end
    if not done[rarest] then walk[1] = rarest end
    return bound, walk
  end
  -- MaxScore: lists sorted by their best contribution; the weakest ones whose summed best
  -- cannot reach the k-th score are probed only.
  local order = {}
  for j = 1, n_terms do if not done[j] then order[#order + 1] = j end end
  table.sort(order, function(x, y) return idf[x] * maxup[x] < idf[y] * maxup[y] end)
  local kth = (mode ~= 'collect' and #top >= k) and top[k][1] or -1
  local weak = 0
  for _, j in ipairs(order) do
    local best = idf[j] * maxup[j] * scale
    if mode ~= 'collect' and weak + best < kth then
      weak = weak + best
    else
      walk[#walk + 1] = j
      bound = bound + idf[j] * frontier[j] * scale
    end
  end
  return bound + weak, walk
end

-- Walk one list alone for documents that hold no other query term: their score is this
-- list's part only, so a run of equal postings (same tf and dl, ascending ids) is decided by
-- its first member, and the walk jumps past runs that lose and stops at the first run whose
-- bound cannot reach the k-th score.
local function walk_single(j, multi)
  local p, step = 0, math.max(16, k * 2)
  while true do
    local items = redis.call('ZRANGE', pkeys[j], p, p + step - 1, 'WITHSCORES')
    if #items == 0 then return end
    local jumped = false
    for m = 1, #items, 2 do
      local id, sc = items[m], items[m + 1]
      if not multi[id] and not dead[id] then
        local _, tf, dl = decode(sc)
        local s = part(j, tf, dl)
        if #top >= k and (s < top[k][1] or (s == top[k][1] and id > top[k][2][1])) then
          local nxt = redis.call('ZRANGE', pkeys[j], '(' .. sc, '+inf', 'BYSCORE', 'LIMIT', 0, 1,
                                 'WITHSCORES')
          if #nxt == 0 then return end
          if idf[j] * (decode(nxt[2]) + 1) / LEVELS * scale < top[k][1] then return end
          p = redis.call('ZCOUNT', pkeys[j], '-inf', sc)
          jumped = true
          break
        end
        local tfs = {}
        for t = 1, n_terms do tfs[t] = 0 end
        tfs[j] = tf
        offer(s, {id, dl, tfs})
      end
    end
    if not jumped then p = p + #items / 2 end
    step = math.min(step * 2, 1024)
  end
end

-- Documents holding two or more query terms, from pairwise intersections (in C, each
-- O(smaller list)), when there are few enough of them; nil otherwise.
local function multi_term_docs()
  if n_terms > 6 then return nil end
  local limit, found, ids = 4096, 0, {}
  for i = 1, n_terms do
    for j = i + 1, n_terms do
      if dfs[i] > 0 and dfs[j] > 0 then
        found = found + redis.call('ZINTERCARD', 2, pkeys[i], pkeys[j], 'LIMIT', limit + 1)
        if found > limit then return nil end
      end
    end
  end
  local multi = {}
  for i = 1, n_terms do
    for j = i + 1, n_terms do
      if dfs[i] > 0 and dfs[j] > 0 then
        for _, id in ipairs(redis.call('ZINTER', 2, pkeys[i], pkeys[j])) do
          if not multi[id] then
            multi[id] = true
            ids[#ids + 1] = id
          end
        end
      end
    end
  end
  return multi, ids
end

-- Score given documents exactly by probing every list (ZMSCORE in chunks).
local function score_ids(ids)
  for c = 1, #ids, 1000 do
    local chunk = {}
    for r = c, math.min(#ids, c + 999) do chunk[#chunk + 1] = ids[r] end
    local tfs, dls, score = {}, {}, {}
    for r = 1, #chunk do tfs[r], score[r] = {}, 0 end
    for j = 1, n_terms do
      local scores = dfs[j] > 0 and redis.call('ZMSCORE', pkeys[j], unpack(chunk)) or {}
      for r = 1, #chunk do
        local sc = scores[r]
        if sc then
          local _, tf, dl = decode(sc)
          tfs[r][j], dls[r] = tf, dl
          score[r] = score[r] + part(j, tf, dl)
        else
          tfs[r][j] = 0
        end
      end
    end
    for r = 1, #chunk do
      if not dead[chunk[r]] then offer(score[r], {chunk[r], dls[r], tfs[r]}) end
    end
  end
end

if mode == 'any' then
  local multi, ids = multi_term_docs()
  if multi then
    score_ids(ids)
    for j = 1, n_terms do if dfs[j] > 0 then walk_single(j, multi) end end
    local out = {}
    for n, entry in ipairs(top) do out[n] = entry[2] end
    return {N, total, dfs, out, expired}
  end
end

local batch = math.max(64, k * 4)
if mode == 'collect' then batch = 1000000000 end
while true do
  local bound, walk = bound_and_walk()
  if #walk == 0 then break end
  if mode ~= 'collect' and #top >= k and top[k][1] > bound then break end
  for _, j in ipairs(walk) do
    local items = redis.call('ZRANGE', pkeys[j], pos[j], pos[j] + batch - 1, 'WITHSCORES')
    local got = #items / 2
    pos[j] = pos[j] + got
    if got < batch then
      done[j], frontier[j] = true, 0
    else
      frontier[j] = (decode(items[#items]) + 1) / LEVELS
    end
    score_batch(j, items)
  end
  batch = math.min(batch * 2, 2048)
end

local out = {}
for n, entry in ipairs(top) do out[n] = entry[2] end
return {N, total, dfs, out, expired}
