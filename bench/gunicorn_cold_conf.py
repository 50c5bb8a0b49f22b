"""The shipped gunicorn config without the workers' warm-up (``post_worker_init``,
``memory_console.worker_warm``): the "before" of ``bench/encoder_preload.py --compare warm``.
Everything else (the encoder preloaded in the master, processes, threads) is as shipped."""

from memory_console.gunicorn_conf import *  # noqa: F403

del post_worker_init  # noqa: F821 - star-imported above
