-- What changed in one index field of one namespace since a stream position, atomically.
-- KEYS[1]: the namespace's write stream (routes the script to the namespace's slot).
-- ARGV: base, field, last_id (exclusive start), count (entries to read at most; 0 = none),
--       hit_time (epoch seconds; '' = count no hits), n_hash_fields, n_hash_fields hash
--       field names (0: whole hashes), then memory ids: the hits of a search made on the
--       index as it was. The same call returns each hit's hot-store hash (only the named
--       fields, when some are named: '' for one the hash leaves out, as it leaves out
--       empty fields). When no entry follows last_id that search is current and, with a
--       hit_time, the call counts one recall hit on each hit that Redis still holds (as
--       memories/access.py's record script does). One round trip in all.
--
-- put.lua appends one entry per write ('op', 'id', 'version', and for an upsert 'f': the
-- field documents it changed) in the same script that
-- changes the postings, so the entry is in the stream before the write returns. This script
-- reads at most `count` entries after `last_id` and, in the same atomic step, the current
-- index record (`v<sfx>:d:<id>`, or for an index of format 6 and older not yet rewritten
-- the field's own document vector `<field><sfx>:d:<id>`) of every memory they name as
-- changed in this field
-- (every memory they name, for entries without the list), plus the live generation,
-- the format stamp, the field's N / total_len and the stream's trim state, from which the
-- caller tells whether it can catch up (no gap) or must rebuild. Bounded by `count`, by the
-- fields of the documents read (MAX_FIELDS below) and by the number of hits the caller
-- sends (search.serving.answer.ROWS_WITH_FEED).
-- Trimming (MAXLEN, XTRIM) removes the oldest entries: entries_added - length of them.
-- Reply: {gen, format, N, total_len, length, last_generated_id, entries_added,
--         {entry ids...}, {ids...}, {record, '' or {field, value, ...}...},
--         {{hash field, value, ...}...},
--         counted (1 when hits were counted), unlisted (1 when the namespace then holds
--         pending hits without its access:listed mark)}
local base, field, last, count = ARGV[1], ARGV[2], ARGV[3], tonumber(ARGV[4])
local hit_time = ARGV[5]
local n_hash_fields = tonumber(ARGV[6])
local hash_fields = {}
for n = 1, n_hash_fields do hash_fields[n] = ARGV[6 + n] end
local first_id = 7 + n_hash_fields
local gen = redis.call('GET', base .. 'gen') or '0'
local format = redis.call('GET', base .. 'format') or '1'
local sfx = ''
if gen ~= '0' then sfx = '@' .. gen end
local fname = field .. sfx
local legacy = tonumber(string.match(format, '%d+$') or '1') < 7
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
-- The entries are read in order until their documents hold MAX_FIELDS fields (a
-- catch-up's work is entries x postings): the reply's `read` lists the entries applied, and
-- the caller asks again after the last one (resumable), so one call stays near a
-- millisecond whatever the documents' length.
local MAX_FIELDS = 1000
local ids, seen, docs, read, fields = {}, {}, {}, {}, 0
-- An entry that lists the field documents its write changed ('f', comma-separated; put.lua
-- since 2 Dec 2026) and not this one is read past: this field's document of that memory is
-- as it was (an entry without the list, as older writers leave, changed every field).
local wanted = ',' .. fname .. ','
for _, entry in ipairs(entries) do
  if fields >= MAX_FIELDS then break end
  read[#read + 1] = entry[1]
  local f = entry[2]
  local id, changed = nil, nil
  for i = 1, #f, 2 do
    if f[i] == 'id' then id = f[i + 1] elseif f[i] == 'f' then changed = f[i + 1] end
  end
  if id and not seen[id]
      and (changed == nil or string.find(',' .. changed .. ',', wanted, 1, true)) then
    seen[id] = true
    ids[#ids + 1] = id
    -- The record (a string: its length / 8 counts as its terms), '' for none, or a
    -- format-6 field vector (field/value pairs).
    local doc = redis.call('GET', base .. 'v' .. sfx .. ':d:' .. id)
    local size = 0
    if doc then
      size = #doc / 8
    elseif legacy then
      doc = redis.call('HGETALL', base .. fname .. ':d:' .. id)
      size = #doc / 2
    else
      doc = ''
    end
    docs[#docs + 1] = doc
    fields = fields + size
  end
end
-- The hits' hashes come back whether or not entries were read: when they were, the caller
-- applies them, searches again and, if its new hits are among these, answers with them
-- (they were read in the same atomic step as the entries). Hits are counted only when no
-- entry was read: then the search the caller made is the one it answers.
local hashes, counted, unlisted = {}, 0, 0
for n = first_id, #ARGV do
  local id = ARGV[n]
  local key = base .. 'm:' .. id
  if n_hash_fields > 0 then
    -- field, value pairs of the named fields ({} for a hash that is gone)
    local values, pairs, held = redis.call('HMGET', key, unpack(hash_fields)), {}, false
    for j = 1, n_hash_fields do
      pairs[#pairs + 1] = hash_fields[j]
      pairs[#pairs + 1] = values[j] or ''
      if values[j] then held = true end
    end
    if not held then pairs = {} end
    hashes[#hashes + 1] = pairs
  else
    hashes[#hashes + 1] = redis.call('HGETALL', key)
  end
end
if #read == 0 then
  if hit_time ~= '' then
    local pending = base .. 'access'
    for n = first_id, #ARGV do
      local id = ARGV[n]
      local key = base .. 'm:' .. id
      -- A hash that is gone (expired, forgotten) is neither re-created nor counted.
      if #hashes[n - first_id + 1] > 0 then
        redis.call('HINCRBY', key, 'access_count', 1)
        redis.call('HSET', key, 'accessed_at', hit_time)
        redis.call('HINCRBY', pending, 'n:' .. id, 1)
        redis.call('HSET', pending, 't:' .. id, hit_time)
      end
    end
    counted = 1
    -- Not vouched for in the set of namespaces with pending hits: the caller adds it
    -- (memories/access.py access_pending_add).
    if redis.call('EXISTS', pending) == 1 and redis.call('EXISTS', pending .. ':listed') == 0 then
      unlisted = 1
    end
  end
end
return {gen, format, st[1] or '0', st[2] or '0', length, top, added, read, ids, docs, hashes,
        counted, unlisted}
