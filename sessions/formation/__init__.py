"""Memory formation: what a conversation leaves behind.

``summary`` (PURE) folds turns into a rolling summary that keeps their facts; ``extraction``
(PURE) picks the turns worth remembering and makes each a standalone memory; ``llm`` asks an
optional language model (an OpenAI-compatible chat-completions API) for either, with the
prompts of ``prompts``; every caller falls back to the local method when the model is off,
slow, failing or wrong.
"""
