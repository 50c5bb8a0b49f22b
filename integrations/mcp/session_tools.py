"""Session tools (short-term conversation memory) and the MCP resources.

Resources: ``memory://{memory_id}`` (a memory, as ``get_memory``) and
``session://{session_id}/context`` (the session's summary and newest messages, as
``get_context`` with its defaults), both JSON.
"""

from typing import Annotated

from mcp.types import ToolAnnotations
from pydantic import BaseModel, Field

from integrations.mcp import bodies
from integrations.mcp.runner import call_tool_body, read_resource_body
from integrations.mcp.shapes import Appended, ContextOut, ExtractOut, SessionOut, SummaryOut

SessionId = Annotated[str, Field(description="the session's id")]


class MessageArg(BaseModel):
    role: str = Field(description="user, assistant, system or tool")
    content: str = Field(description="the message's text")


async def create_session(
    user_id: Annotated[str | None, Field(description=(
        "the namespace the session belongs to; leave it out to use the connection's "
        "default namespace (required when there is none)"))] = None,
    session_id: Annotated[str | None, Field(description="generated when absent")] = None,
    agent_id: Annotated[str, Field(description="the agent holding the conversation")] = "",
    run_id: Annotated[str, Field(description=(
        "the agent's run; memories promoted or extracted from the session carry it"))] = "",
    ttl_seconds: Annotated[int | None, Field(description="hot window TTL, sliding")] = None,
    system_prompt: Annotated[str, Field(description="the conversation's system prompt, "
                                                    "kept with it")] = "",
    metadata: Annotated[dict | None, Field(description="any JSON object kept with the "
                                                       "session")] = None,
) -> SessionOut:
    """Start a short-term conversation session (its transcript is kept; the newest
    messages stay hot). Call it at the start of a conversation whose turns should be
    kept, then append_messages after each turn and get_context to rebuild the prompt."""
    return await call_tool_body(bodies.create_session, **locals())


async def append_messages(
    session_id: SessionId,
    messages: Annotated[list[MessageArg] | None, Field(description="several at once")] = None,
    role: Annotated[str | None, Field(description="one message: its role ...")] = None,
    content: Annotated[str | None, Field(description="... and its text")] = None,
) -> Appended:
    """Add messages to a session's transcript (role + content, or messages). Call it after
    each turn of a session's conversation."""
    args = {k: v for k, v in {"role": role, "content": content}.items() if v is not None}
    if messages is not None:
        args["messages"] = [m.model_dump() for m in messages]
    return await call_tool_body(bodies.append_messages, session_id=session_id, **args)


async def get_context(
    session_id: SessionId,
    last: Annotated[int, Field(description="newest messages wanted, 1..1000")] = 20,
    max_tokens: Annotated[int | None, Field(description="keep the newest that fit "
                                                        "(characters / 4)")] = None,
    at: Annotated[str | None, Field(description="ISO 8601: the context as it was then")] = None,
) -> ContextOut:
    """A session's context for the next turn: its rolling summary and newest messages.
    Call it when a conversation resumes or its history no longer fits the prompt."""
    return await call_tool_body(bodies.get_context, **locals())


async def summarise_session(
    session_id: SessionId,
    max_chars: Annotated[int | None, Field(description="the summary's length at most, "
                                                       "100..20000 (default 2000)")] = None,
) -> SummaryOut:
    """The summary of the whole session now (the language model's when one is configured,
    else the local method's: ``method`` says which); read-only."""
    return await call_tool_body(bodies.summarise_session, **locals())


async def extract_memories(
    session_id: SessionId,
    dry_run: Annotated[bool, Field(description="true: only answer the candidates; false: "
                                               "also write them as memories")] = True,
) -> ExtractOut:
    """The memories worth keeping from a session's messages (statements about people,
    plans, preferences, decisions; never bare questions or greetings), each standing alone
    with the seqs it comes from; dry_run false writes them in the session's namespace."""
    return await call_tool_body(bodies.extract_memories, **locals())


TOOLS = [
    (create_session, ToolAnnotations(title="Start a session", read_only_hint=False,
                                     destructive_hint=False, open_world_hint=False)),
    (append_messages, ToolAnnotations(title="Append messages", read_only_hint=False,
                                      destructive_hint=False, open_world_hint=False)),
    (get_context, ToolAnnotations(title="Session context", read_only_hint=True,
                                  idempotent_hint=True, open_world_hint=False)),
    (summarise_session, ToolAnnotations(title="Summarise a session", read_only_hint=True,
                                        idempotent_hint=True, open_world_hint=False)),
    (extract_memories, ToolAnnotations(title="Extract memories", read_only_hint=False,
                                       destructive_hint=False, idempotent_hint=True,
                                       open_world_hint=False)),
]


async def memory_resource(memory_id: str) -> str:
    """A memory with every field (JSON)."""
    return await read_resource_body(bodies.get_memory, memory_id=memory_id)


async def session_context_resource(session_id: str) -> str:
    """A session's summary and newest 20 messages (JSON)."""
    return await read_resource_body(bodies.get_context, session_id=session_id)


RESOURCES = [
    ("memory://{memory_id}", "memory", memory_resource),
    ("session://{session_id}/context", "session_context", session_context_resource),
]
