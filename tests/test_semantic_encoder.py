"""search.semantic.encoder: all-MiniLM-L6-v2 gives the model's published outputs (the float
model, in NumPy); the 8-bit variant that runs stays within cosine 0.99 of it, on ONNX
Runtime (what runs) and in NumPy (the reference it is held to, and the fallback)."""

import numpy as np
import pytest

from search.semantic import encoder


@pytest.fixture(params=["onnxruntime", "numpy"])
def backend(request, monkeypatch):
    if request.param == "numpy":
        monkeypatch.setattr(encoder, "_session", lambda: None)
    assert encoder.backend() == request.param
    return request.param


def test_the_weights_ship_in_the_installed_package():
    assert encoder.model_available()


def test_the_float_model_matches_sentence_transformers_reference_outputs():
    vectors = encoder._encode(["A man is eating food.", "A man is eating a piece of bread.",
                               "A man is riding a horse.", "This is an example sentence"],
                              batch_size=4, int8=frozenset())
    assert vectors.shape == (4, encoder.DIM) and vectors.dtype == np.float32
    assert np.linalg.norm(vectors, axis=1) == pytest.approx(1.0, abs=1e-5)
    # sentence-transformers' documented similarity of the first two sentences: 0.7553.
    assert float(vectors[0] @ vectors[1]) == pytest.approx(0.7553, abs=5e-4)
    assert float(vectors[0] @ vectors[1]) > float(vectors[0] @ vectors[2])
    # The model card's embedding of "This is an example sentence" starts like this.
    assert vectors[3][:4] == pytest.approx([0.0677, 0.0635, 0.0487, 0.0793], abs=2e-3)


_TEXTS = ["Calvin: after a long day I unwind with my guitar and relax at home",
          "What did Calvin's studio go through in May?",
          "Melanie: I painted a lake sunrise last year! " * 30,  # over 256 pieces
          "张工上周提的那个 Redis 超时问题", "Caroline: #LGBTQ support group, 7 May 2023 :)",
          "John: Thanks, Maria. It sure has taken a while but we finally did it!",
          "How does Calvin unwind?", "A man is eating a piece of bread."]


def test_onnx_runtime_gives_the_numpy_reference_vectors(monkeypatch):
    """A 256-piece cut, punctuation and a Chinese text: the graph computes what the NumPy
    forward pass computes, close, not equal: ORT's int8 kernels round the quantised input
    their own way (cosine 0.9995 here, where the float model's vectors are 0.999 away)."""
    assert encoder.backend() == "onnxruntime"
    fast = encoder.encode(_TEXTS)
    monkeypatch.setattr(encoder, "_session", lambda: None)
    reference = encoder.encode(_TEXTS)
    assert np.abs(fast - reference).max() < 1e-2
    assert min((fast * reference).sum(1)) >= 0.999


def test_int8_stays_within_cosine_0_99_of_the_float_model(backend):
    """The 8-bit model as shipped against the float one (docs/benchmarks.md, encoder: min
    0.997 on LoCoMo turns and questions, 0.993 on texts of a word or two)."""
    texts = [*_TEXTS, "ok", "thanks!", "guitar", "Where?"]
    vectors = encoder.encode(texts)
    floats = encoder._encode(texts, batch_size=4, int8=frozenset())
    assert min((vectors * floats).sum(1)) >= 0.99
    assert min((vectors[:len(_TEXTS)] * floats[:len(_TEXTS)]).sum(1)) >= 0.995
    assert encoder.MODEL_NAME != "all-MiniLM-L6-v2"  # not the float model's vectors


def test_batching_and_order_do_not_change_a_vector(backend):
    """The int8 layers quantise their input per row (in blocks), never over the batch: a
    text's vector does not depend on the texts encoded with it (a float32 rounding apart may
    move one quantised value by a step)."""
    texts = ["short", "a much longer sentence about a studio and a mansion by the sea", "mid one"]
    together = encoder.encode(texts, batch_size=2)
    alone = np.vstack([encoder.encode([t]) for t in texts])
    assert together == pytest.approx(alone, abs=2e-3)
    floats = encoder._encode(texts, batch_size=2, int8=frozenset())
    assert floats == pytest.approx(np.vstack([encoder._encode([t], batch_size=1, int8=frozenset())
                                              for t in texts]), abs=1e-5)


def test_no_texts_no_vectors():
    assert encoder.encode([]).shape == (0, encoder.DIM)
