-- What changed in one index field of one namespace since a stream position, atomically.
-- KEYS[1]: the namespace's write stream (routes the script to the namespace's slot).
-- ARGV: base, field, last_id (exclusive start), count (entries to read at most; 0 = none),
--       then memory ids whose hot-store hash to return when no entry follows last_id (a
--       search made on the index as it was is then current: one round trip in all).
--
-- put.lua appends one entry per write ('op', 'id', 'version') in the same script that
-- changes the postings, so the entry is in the stream before the write returns. This script
-- reads at most `count` entries after `last_id` and, in the same atomic step, the current
-- document vector (`<field>:d:<id>`) of every memory they name, plus the live generation,
-- the format stamp, the field's N / total_len and the stream's trim state, from which the
-- caller tells whether it can catch up (no gap) or must rebuild. Bounded by `count`.
-- Trimming (MAXLEN, XTRIM) removes the oldest entries: entries_added - length of them.
-- Reply: {gen, format, N, total_len, length, last_generated_id, entries_added,
--         {entry ids...}, {ids...}, {{field, value, ...}...}, {{hash field, value, ...}...}}
local base, field, last, count = ARGV[1], ARGV[2], ARGV[3], tonumber(ARGV[4])
local gen = redis.call('GET', base .. 'gen') or '0'
local format = redis.call('GET', base .. 'format') or '1'
local fname = field
if gen ~= '0' then fname = field .. '@' .. gen end
local st = redis.call('HMGET', base .. fname .. ':stats', 'N', 'total_len')
local stream = KEYS[1]
local length, top, added = 0, '0-0', 0
local entries = {}
if redis.call('EXISTS', stream) == 1 then
  local info = redis.call('XINFO', 'STREAM', stream)
  for i = 1, #info, 2 do
    local name = info[i]
    if name == 'length' then length = info[i + 1]
    elseif name == 'last-generated-id' then top = info[i + 1]
    elseif name == 'entries-added' then added = info[i + 1] end
  end
  if count > 0 then
    entries = redis.call('XRANGE', stream, '(' .. last, '+', 'COUNT', count)
  end
end
local ids, seen, docs, read = {}, {}, {}, {}
for _, entry in ipairs(entries) do
  read[#read + 1] = entry[1]
  local f = entry[2]
  for i = 1, #f, 2 do
    if f[i] == 'id' and not seen[f[i + 1]] then
      seen[f[i + 1]] = true
      ids[#ids + 1] = f[i + 1]
    end
  end
end
for n, id in ipairs(ids) do docs[n] = redis.call('HGETALL', base .. fname .. ':d:' .. id) end
local hashes = {}
if #read == 0 then
  for n = 5, #ARGV do hashes[n - 4] = redis.call('HGETALL', base .. 'm:' .. ARGV[n]) end
end
return {gen, format, st[1] or '0', st[2] or '0', length, top, added, read, ids, docs, hashes}
