"""The BERT encoder of all-MiniLM-L6-v2 as an ONNX graph, built from the package's weights.

Pure (no Django, no Redis). :func:`build` describes the forward pass of the NumPy reference
(``encoder._forward``) as an ``onnx.ModelProto`` with ``onnx.helper``: no torch, no export,
nothing downloaded or written. The weights are not copied into the graph: each is declared
as external data and handed to ONNX Runtime from the arrays ``encoder`` already holds
(``SessionOptions.add_external_initializers``), so building is quick and makes no second
copy of the weights. The graph ends at the last hidden state (embeddings + LayerNorm, 6 layers of
self-attention and GELU feed-forward, post-LayerNorm, eps 1e-12); pooling and normalisation
stay in NumPy, shared by both paths.

Inputs ``input_ids`` int64 ``(b, t)`` and ``attention_mask`` float32 ``(b, t)`` (1 = piece,
0 = padding); output ``hidden`` float32 ``(b, t, 384)``. Standard ONNX operators of opset 17
(LayerNormalization, Erf, Softmax...), so ONNX Runtime's graph optimiser can fuse them
(LayerNorm, GELU, attention) for its CPU kernels. A Linear named in ``int8`` is ONNX
Runtime's ``com.microsoft.MatMulNBits`` with 8-bit weights in blocks of :data:`BLOCK` along
the input (a scale per block and output, zero point 128) and ``accuracy_level`` 4: the input
too is quantised to int8 per block of each row, so the products run on int8 (VNNI) and a
text's vector does not depend on the others of its batch.
"""

from __future__ import annotations

import math

import numpy as np

__all__ = ["BLOCK", "OPSET", "build"]

OPSET = 17
# Input elements per int8 block (weights and input), a scale each: 128 takes less CPU than
# 32 (fewer scales to apply), at a cosine to the float model's vectors of 0.997 on LoCoMo
# texts against 0.999 (docs/benchmarks.md, encoder).
BLOCK = 128


def build(weights: dict[str, np.ndarray], *, layers: int, heads: int, dim: int, eps: float,
          int8: frozenset[str] = frozenset()):
    """``(model, external)``: the graph as an ``onnx.ModelProto`` and ``{name: array}``, the
    weights it declares as external data (to be passed to ONNX Runtime, and kept alive as long
    as its session). ``weights``: the model's float32 tensors by their safetensors names,
    Linear weights already as ``(in, out)`` (encoder._model's layout). Raises KeyError when
    a tensor is missing. ``int8``: prefixes of the Linear layers run on 8-bit weights, which
    ``weights`` then also holds as ``<prefix>.weight_q8`` (uint8 ``(out, in / BLOCK,
    BLOCK)``) and ``<prefix>.weight_scale`` (float32 ``(out * in / BLOCK,)``): weight =
    (q8 - 128) * scale (``encoder.quantize_blocks``)."""
    from onnx import TensorProto, helper, numpy_helper

    nodes, inits, external = [], [], {}
    names = iter(range(1 << 30))

    def tmp(prefix: str) -> str:
        return f"{prefix}_{next(names)}"

    def const(name: str, array) -> str:
        inits.append(numpy_helper.from_array(np.asarray(array), name))
        return name

    def op(kind: str, inputs: list[str], **attrs) -> str:
        out = tmp(kind.lower())
        nodes.append(helper.make_node(kind, inputs, [out], **attrs))
        return out

    def weight(name: str, dtype=np.float32, array=None) -> str:
        array = np.ascontiguousarray(weights[name] if array is None else array, dtype=dtype)
        kind = TensorProto.UINT8 if array.dtype == np.uint8 else TensorProto.FLOAT
        tensor = TensorProto(name=name, data_type=kind, dims=array.shape,
                             data_location=TensorProto.EXTERNAL)
        for key, value in (("location", "memory"), ("offset", "0"),
                           ("length", str(array.nbytes))):
            entry = tensor.external_data.add()
            entry.key, entry.value = key, value
        inits.append(tensor)
        external[name] = array
        return name

    def linear(x: str, prefix: str) -> str:
        if prefix in int8:
            return linear_q8(x, [prefix])
        return op("Add", [op("MatMul", [x, weight(prefix + ".weight")]), weight(prefix + ".bias")])

    def linear_q8(x: str, prefixes: list[str]) -> str:
        """The 8-bit Linear layers of ``prefixes`` over the same input as one product: their
        outputs side by side (each output column is quantised on its own, so joining them
        changes no value; the input is quantised once)."""
        name = "+".join(prefixes)
        q8 = np.concatenate([weights[p + ".weight_q8"] for p in prefixes])
        n, blocks, _ = q8.shape
        product = op("MatMulNBits", [
            x, weight(name + ".weight_q8", np.uint8, q8),
            weight(name + ".weight_scale", array=np.concatenate(
                [weights[p + ".weight_scale"] for p in prefixes]))],
            domain="com.microsoft", K=blocks * BLOCK, N=n, bits=8, block_size=BLOCK,
            accuracy_level=4)
        return op("Add", [product, weight(name + ".bias", array=np.concatenate(
            [weights[p + ".bias"] for p in prefixes]))])

    def layer_norm(x: str, prefix: str) -> str:
        return op("LayerNormalization", [x, weight(prefix + ".weight"), weight(prefix + ".bias")],
                  axis=-1, epsilon=eps)

    hd = dim // heads
    split = const("shape_heads", np.array([0, 0, heads, hd], dtype=np.int64))
    merge = const("shape_merge", np.array([0, 0, dim], dtype=np.int64))
    zero = const("zero", np.array([0], dtype=np.int64))
    one = const("one", np.array([1], dtype=np.int64))

    # Embeddings: word + position (first t rows) + token type 0.
    t = op("Slice", [op("Shape", ["input_ids"]), one, const("two", np.array([2], np.int64))])
    position = op("Slice", [weight("embeddings.position_embeddings.weight"), zero, t, zero])
    x = op("Add", [op("Gather", [weight("embeddings.word_embeddings.weight"), "input_ids"]),
                   position])
    x = op("Add", [x, const("token_type_0",
                            weights["embeddings.token_type_embeddings.weight"][0]
                            .astype(np.float32))])
    x = layer_norm(x, "embeddings.LayerNorm")
    # Additive attention bias (b, 1, 1, t): 0 for pieces, -1e9 for padding.
    bias = op("Mul", [op("Sub", [const("f_one", np.float32(1.0)), "attention_mask"]),
                      const("neg", np.float32(-1e9))])
    bias = op("Unsqueeze", [bias, const("axes_12", np.array([1, 2], dtype=np.int64))])
    scale = const("scale", np.float32(1.0 / math.sqrt(hd)))
    for n in range(layers):
        p = f"encoder.layer.{n}."

        projections = [p + "attention.self." + m for m in ("query", "key", "value")]
        if all(name in int8 for name in projections):
            qkv = [tmp("qkv") for _ in projections]
            thirds = const(f"thirds_{n}", np.array([dim] * 3, dtype=np.int64))
            nodes.append(helper.make_node("Split", [linear_q8(x, projections), thirds], qkv,
                                          axis=-1))
        else:
            qkv = [linear(x, name) for name in projections]

        def heads_of(projected: str, perm: list[int]) -> str:
            return op("Transpose", [op("Reshape", [projected, split])], perm=perm)

        q = heads_of(qkv[0], [0, 2, 1, 3])
        k = heads_of(qkv[1], [0, 2, 3, 1])
        v = heads_of(qkv[2], [0, 2, 1, 3])
        scores = op("Add", [op("Mul", [op("MatMul", [q, k]), scale]), bias])
        probs = op("Softmax", [scores], axis=-1)
        ctx = op("Reshape", [op("Transpose", [op("MatMul", [probs, v])], perm=[0, 2, 1, 3]),
                             merge])
        x = layer_norm(op("Add", [linear(ctx, p + "attention.output.dense"), x]),
                       p + "attention.output.LayerNorm")
        h = linear(x, p + "intermediate.dense")
        # BERT's exact GELU: 0.5 * h * (1 + erf(h / sqrt 2)).
        erf = op("Erf", [op("Div", [h, const(f"sqrt2_{n}", np.float32(math.sqrt(2.0)))])])
        h = op("Mul", [op("Mul", [h, op("Add", [erf, const(f"one_{n}", np.float32(1.0))])]),
                       const(f"half_{n}", np.float32(0.5))])
        x = layer_norm(op("Add", [linear(h, p + "output.dense"), x]), p + "output.LayerNorm")
    nodes.append(helper.make_node("Identity", [x], ["hidden"]))
    graph = helper.make_graph(
        nodes, "all-MiniLM-L6-v2",
        [helper.make_tensor_value_info("input_ids", TensorProto.INT64, ["b", "t"]),
         helper.make_tensor_value_info("attention_mask", TensorProto.FLOAT, ["b", "t"])],
        [helper.make_tensor_value_info("hidden", TensorProto.FLOAT, ["b", "t", dim])],
        inits)
    opsets = [helper.make_opsetid("", OPSET)] + (
        [helper.make_opsetid("com.microsoft", 1)] if int8 else [])
    model = helper.make_model(graph, opset_imports=opsets,
                              producer_name="memory-console")
    return model, external
