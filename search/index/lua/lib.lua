-- Functions put.lua and put_many.lua share: search.index.postings puts this file before each.

-- The key suffix of a generation's field keys: '' for generation 0 (`c:…`), '@N' for N.
local function suffix(gen)
  if gen == nil or gen == '0' then return '' end
  return '@' .. gen
end

-- Commands with many arguments, in slices (Lua's unpack takes a few thousand at most).
local function many(cmd, key, list, step)
  for s = 1, #list, step do
    local e = math.min(#list, s + step - 1)
    redis.call(cmd, key, unpack(list, s, e))
  end
end

-- Posting score: -(level + code / 2^34), where level = floor(impact * 2^16) is the tf part
-- under the reference statistics (norm = k1 * (1 - b + b * dl / avgdl_ref)) and code =
-- tf * 2^17 + (2^17 - 1 - dl) carries the raw tf and dl, so a reader scores the posting
-- exactly from the score alone. Negated so ZRANGE walks best-first; equal scores come in
-- ascending memory_id order.
local function posting_score(tf, dl, norm)
  local level = math.floor(tf / (tf + norm) * 65536)
  local code = tf * 131072 + (131071 - dl)
  return -(level + code / 17179869184)
end
