"""prove_jax.serve: an OpenAI-compatible server over the JAX engine, and the chat-policy interface
every evaluation drives (``ChatClient``: the engine in-process, or any OpenAI-compatible URL).

``python -m prove_jax.serve --model DIR`` serves an HF directory or a training checkpoint.
"""

from prove_jax.serve.chat import EngineChat, OpenAIChat
from prove_jax.serve.load import LoadedPolicy, load_policy
from prove_jax.serve.messages import RequestError
from prove_jax.serve.protocol import ChatClient, ChatReply

__all__ = ["ChatClient", "ChatReply", "EngineChat", "LoadedPolicy", "OpenAIChat", "RequestError", "load_policy"]
