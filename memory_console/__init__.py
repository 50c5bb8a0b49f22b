"""Project wiring. One thing must happen before anything imports NumPy: its BLAS thread pool
is held to one thread per process unless the environment says otherwise. The sentence
encoder (search.semantic.encoder) is the one BLAS-heavy user; gunicorn runs 3 processes x 3
threads on 2 cores, and OpenBLAS's default pool (a thread per core, spinning) oversubscribed
them: encoding was many times slower with the default pool than with one thread on a
loaded 2-core machine."""

import os

for _name in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_name, "1")
