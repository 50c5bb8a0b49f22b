"""Project wiring. One thing must happen before anything imports NumPy: its BLAS thread pool
is held to one thread per process unless the environment says otherwise. The sentence
encoder (search.semantic.encoder) is the one BLAS-heavy user; gunicorn runs 3 processes x 3
threads on 2 cores, and OpenBLAS's default pool (a thread per core, spinning) oversubscribed
them: 64 short texts took 110 s to encode on this loaded machine with the default pool and
7.5 s with one thread (bench/README.md, semantic)."""

import os

for _name in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_name, "1")
