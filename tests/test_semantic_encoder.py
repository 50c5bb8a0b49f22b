"""search.semantic.encoder: all-MiniLM-L6-v2 in NumPy gives the model's published outputs."""

import numpy as np
import pytest

from search.semantic import encoder


def test_the_weights_ship_in_the_installed_package():
    assert encoder.model_available()


def test_it_matches_sentence_transformers_reference_outputs():
    vectors = encoder.encode(["A man is eating food.", "A man is eating a piece of bread.",
                              "A man is riding a horse.", "This is an example sentence"])
    assert vectors.shape == (4, encoder.DIM) and vectors.dtype == np.float32
    assert np.linalg.norm(vectors, axis=1) == pytest.approx(1.0, abs=1e-5)
    # sentence-transformers' documented similarity of the first two sentences: 0.7553.
    assert float(vectors[0] @ vectors[1]) == pytest.approx(0.7553, abs=5e-4)
    assert float(vectors[0] @ vectors[1]) > float(vectors[0] @ vectors[2])
    # The model card's embedding of "This is an example sentence" starts like this.
    assert vectors[3][:4] == pytest.approx([0.0677, 0.0635, 0.0487, 0.0793], abs=2e-3)


def test_batching_and_order_do_not_change_a_vector():
    texts = ["short", "a much longer sentence about a studio and a mansion by the sea", "mid one"]
    together = encoder.encode(texts, batch_size=2)
    alone = np.vstack([encoder.encode([t]) for t in texts])
    assert together == pytest.approx(alone, abs=1e-5)


def test_no_texts_no_vectors():
    assert encoder.encode([]).shape == (0, encoder.DIM)
