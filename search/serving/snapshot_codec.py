"""A serving index as bytes and back (PURE: NumPy, orjson and Zstandard; no Django, no
Redis): what ``search.serving.snapshot`` keeps in Redis.

The index is merged first (no delta, no dead document) and terms that only removed
documents held are left out (not one word of a purged memory stays in the term list). Each
array is compressed with Zstandard after a byte shuffle (the k-th bytes of all values
together: small integers leave whole planes of zeros); the postings' document numbers as
differences (each less the one before: small within a term), term frequencies and the
per-term bounds in the narrowest unsigned type; the term, type and conversation names as
JSON.
"""

import numpy as np
import orjson
import zstandard

from search.serving.engine import FieldIndex

ZSTD_LEVEL = 3


def _compress(raw: bytes) -> bytes:
    return zstandard.ZstdCompressor(level=ZSTD_LEVEL).compress(raw)


def _decompress(data: bytes) -> bytes:
    return zstandard.ZstdDecompressor().decompress(data)


def _pack(array: np.ndarray) -> bytes:
    """The array's bytes shuffled (all first bytes, then all second bytes...), compressed."""
    array = np.ascontiguousarray(array)
    return _compress(array.view(np.uint8).reshape(-1, array.itemsize).T.tobytes())


def _unpack(data: bytes, dtype: str, count: int) -> np.ndarray:
    dtype = np.dtype(dtype)
    raw = np.frombuffer(_decompress(data), np.uint8)
    if len(raw) != count * dtype.itemsize:
        raise ValueError("a section of a serving index snapshot has another length")
    return raw.reshape(dtype.itemsize, count).T.copy().view(dtype).reshape(count)


def _narrow(values: np.ndarray) -> np.ndarray:
    """Non-negative integers in the narrowest unsigned type that holds them."""
    top = int(values.max()) if len(values) else 0
    for dtype in (np.uint8, np.uint16, np.uint32):
        if top <= np.iinfo(dtype).max:
            return values.astype(dtype)
    return values.astype(np.uint64)


def encode(index: FieldIndex) -> tuple[bytes, dict]:
    """``(blob, layout)`` of ``index`` (merged first, which it is after; no term that only
    removed documents held). ``layout``: ``{"sections": [[name, dtype, count, bytes]...],
    "docs", "terms", "postings", "raw_bytes"}``, what :func:`decode` takes with the blob."""
    arrays, names = index.arrays()
    counts = np.diff(arrays["indptr"])
    held = counts > 0  # a term of removed documents only: not one word of it is kept
    vocab = [term for term, keep in zip(names["vocab"], held.tolist(), strict=True) if keep]
    counts = counts[held]
    p_docs = arrays["p_docs"]
    # Doc ids ascend within each term: each one less the one before is small (negative at a
    # term's first), and one running sum gives them all back.
    gaps = np.diff(p_docs, prepend=np.int32(0)).astype(np.int32)
    sections = {
        "df": _narrow(counts), "gaps": gaps, "tfs": _narrow(arrays["p_tfs"]),
        "tmax": _narrow(arrays["tmax"][held]), "dlmin": _narrow(arrays["dlmin"][held]),
        **{name: arrays[name] for name in FieldIndex.ARRAYS[5:]},
        "names": orjson.dumps({"vocab": vocab, "types": names["types"],
                               "convs": names["convs"]}),
    }
    parts, layout, raw_bytes = [], [], 0
    for name, value in sections.items():
        if isinstance(value, bytes):
            data, dtype, count = _compress(value), "bytes", len(value)
            raw_bytes += len(value)
        else:
            data, dtype, count = _pack(value), value.dtype.str, len(value)
            raw_bytes += value.nbytes
        parts.append(data)
        layout.append([name, dtype, count, len(data)])
    return b"".join(parts), {"sections": layout, "docs": len(arrays["dl"]),
                             "terms": len(vocab), "postings": len(p_docs),
                             "raw_bytes": raw_bytes}


def decode(blob: bytes, layout: dict) -> FieldIndex:
    """The index :func:`encode` wrote. Raises ValueError (``orjson.JSONDecodeError`` is
    one) or ``zstandard.ZstdError`` when the blob does not decode into arrays that fit
    together."""
    got, at = {}, 0
    for name, dtype, count, length in layout["sections"]:
        data = blob[at:at + length]
        at += length
        if dtype == "bytes":
            raw = _decompress(data)
            if len(raw) != count:
                raise ValueError("a section of a serving index snapshot has another length")
            got[name] = orjson.loads(raw)
        else:
            got[name] = _unpack(data, dtype, count)
    if at != len(blob):
        raise ValueError("a serving index snapshot has bytes beyond its sections")
    counts = got["df"].astype(np.int64)
    indptr = np.zeros(len(counts) + 1, np.int64)
    np.cumsum(counts, out=indptr[1:])
    gaps = got["gaps"]
    if len(gaps) != indptr[-1] or (len(counts) and counts.min() <= 0):
        raise ValueError("the postings of a serving index snapshot do not fit its terms")
    # (from_arrays checks that every document number is one it holds)
    arrays = {"indptr": indptr, "p_docs": np.cumsum(gaps, dtype=np.int32),
              **{name: got[name] for name in ("tfs", "tmax", "dlmin")},
              **{name: got[name] for name in FieldIndex.ARRAYS[5:]}}
    arrays["p_tfs"] = arrays.pop("tfs")
    return FieldIndex.from_arrays(arrays, got["names"])
