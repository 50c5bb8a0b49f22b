"""search.semantic.encoder: all-MiniLM-L6-v2 gives the model's published outputs, on ONNX
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


def test_it_matches_sentence_transformers_reference_outputs(backend):
    vectors = encoder.encode(["A man is eating food.", "A man is eating a piece of bread.",
                              "A man is riding a horse.", "This is an example sentence"])
    assert vectors.shape == (4, encoder.DIM) and vectors.dtype == np.float32
    assert np.linalg.norm(vectors, axis=1) == pytest.approx(1.0, abs=1e-5)
    # sentence-transformers' documented similarity of the first two sentences: 0.7553.
    assert float(vectors[0] @ vectors[1]) == pytest.approx(0.7553, abs=5e-4)
    assert float(vectors[0] @ vectors[1]) > float(vectors[0] @ vectors[2])
    # The model card's embedding of "This is an example sentence" starts like this.
    assert vectors[3][:4] == pytest.approx([0.0677, 0.0635, 0.0487, 0.0793], abs=2e-3)


def test_onnx_runtime_gives_the_numpy_reference_vectors(monkeypatch):
    """Padded batches of mixed lengths, a 256-piece cut, punctuation and a Chinese text: the
    graph computes what the NumPy forward pass computes (float32 rounding apart)."""
    texts = ["Calvin: after a long day I unwind with my guitar and relax at home",
             "ok", "What did Calvin's studio go through in May?",
             "Melanie: I painted a lake sunrise last year! " * 30,  # over 256 pieces
             "张工上周提的那个 Redis 超时问题", "Caroline: #LGBTQ support group, 7 May 2023 :)"]
    assert encoder.backend() == "onnxruntime"
    fast = encoder.encode(texts, batch_size=4)
    monkeypatch.setattr(encoder, "_session", lambda: None)
    reference = encoder.encode(texts, batch_size=4)
    assert np.abs(fast - reference).max() < 1e-5
    assert (fast * reference).sum(1) == pytest.approx(1.0, abs=1e-6)


def test_batching_and_order_do_not_change_a_vector(backend):
    texts = ["short", "a much longer sentence about a studio and a mansion by the sea", "mid one"]
    together = encoder.encode(texts, batch_size=2)
    alone = np.vstack([encoder.encode([t]) for t in texts])
    assert together == pytest.approx(alone, abs=1e-5)


def test_no_texts_no_vectors():
    assert encoder.encode([]).shape == (0, encoder.DIM)
