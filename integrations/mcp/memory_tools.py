"""Memory tools: remember, recall, read, change, forget, list, promote; facts over time
(supersede, invalidate, revalidate) and the review queue of proposed supersessions.

Each tool is a thin async wrapper (its signature is the tool's input schema; arguments are
named as the REST fields) over a sync body that does what the REST view does: the same
role and namespace checks, the API's own request schema for validation, then one service
(writes) or selector (reads).
"""

from typing import Annotated, Literal

from mcp.types import ToolAnnotations
from pydantic import Field, StrictBool, StrictInt

from integrations.mcp import bodies
from integrations.mcp.runner import call_tool_body
from integrations.mcp.shapes import (
    AddMemoryOut,
    ConflictOut,
    ConflictPage,
    FeedbackOut,
    Forgotten,
    MemoryOut,
    MemoryPage,
    SearchOut,
)

MemoryType = Literal["long_term", "short_term", "working"]
UserId = Annotated[str | None, Field(description=(
    "the namespace (1-128 characters), usually the user the memories are about; leave it "
    "out to use the connection's default namespace (required when there is none)"))]
Tags = Annotated[list[str] | None, Field(description="labels to file it under, e.g. "
                                                     "[\"work\", \"travel\"]")]
Metadata = Annotated[dict | None, Field(description="any JSON object the caller wants kept "
                                                    "with it (not searched)")]
MemoryId = Annotated[str, Field(description="mem_ + 16 hex digits")]
ConversationId = Annotated[str | None, Field(
    description="the conversation it belongs to; null = user-wide")]
Reason = Annotated[str, Field(description="why, kept in the memory's history")]
Supersedes = Annotated[list[str] | None, Field(description=(
    "ids of memories this one makes no longer true, e.g. an old address when the user "
    "moved: they stay readable, marked superseded, and leave recall (same user_id)"))]
ValidFrom = Annotated[str | None, Field(description=(
    "ISO 8601: when this fact began to hold in the world (default: now); give it when the "
    "user says when, e.g. 'since August'"))]
AgentId = Annotated[str | None, Field(description=(
    "the agent writing it (1-128 characters), e.g. 'planner'; a token restricted to agents "
    "must name one of them"))]
RunId = Annotated[str | None, Field(description="the agent's run (one task) it comes from")]
# The filters every reading tool takes, as REST recall and GET /memories (api.filters).
Since = Annotated[str | None, Field(description="ISO 8601: written at or after this moment")]
Until = Annotated[str | None, Field(description="ISO 8601: written before this moment")]
AuthorFilter = Annotated[str | None, Field(description="only memories with this author")]
TagsFilter = Annotated[list[str] | None, Field(description="only memories holding every tag "
                                                           "given")]
AgentFilter = Annotated[str | None, Field(description="only memories of this agent")]
RunFilter = Annotated[str | None, Field(description="only memories of this run")]
MetadataFilter = Annotated[dict[str, str] | None, Field(
    description="dotted path -> the string the memory's metadata holds there, e.g. "
                "{\"project.name\": \"apollo\"}")]
Now = Annotated[str | None, Field(description=(
    "ISO 8601: the moment to answer at (time words count from it, facts valid then); "
    "default now"))]
AsOf = Annotated[str | None, Field(description=(
    "ISO 8601: answer with the facts that held then (e.g. where the user lived last "
    "July) instead of the facts valid now"))]
Supersession = Annotated[Literal["off", "propose", "apply"] | None, Field(description=(
    "what the server does with older memories it finds this one contradicts: propose "
    "(list them for review), apply (supersede them), off; default: the server's setting"))]


async def add_memory(
    content: Annotated[str, Field(description=(
        "the text to remember (not blank): one fact that stands alone, e.g. 'Alice is "
        "allergic to peanuts'"))],
    user_id: UserId = None,
    conversation_id: ConversationId = None,
    type: Annotated[MemoryType, Field(description=(
        "long_term (default: facts, preferences), short_term (expires after ttl_seconds) "
        "or working (scratch notes of a task)"))] = "long_term",
    importance: Annotated[float | None, Field(description="0..1; estimated when absent")] = None,
    tags: Tags = None,
    metadata: Metadata = None,
    source: Annotated[str, Field(description="the system it came from")] = "",
    author: Annotated[str, Field(description="who stated it (a person or an agent's "
                                             "name)")] = "",
    agent_id: AgentId = None,
    run_id: RunId = None,
    keywords: Annotated[list[str] | None, Field(description=(
        "extra words it should be found by (indexed, not shown)"))] = None,
    ttl_seconds: Annotated[int | None, Field(description="short_term only; default 24 h")] = None,
    created_at: Annotated[str | None, Field(description="ISO 8601, for imports")] = None,
    context: Annotated[str, Field(description="text indexed beside the content")] = "",
    supersedes: Supersedes = None,
    valid_from: ValidFrom = None,
    supersession: Supersession = None,
    infer: Annotated[bool, Field(description=(
        "content is a chat transcript ('Speaker: text' lines) or a note: write the memories "
        "extracted from it instead of the text; the answer lists them in memories"))] = False,
) -> AddMemoryOut:
    """Remember one memory. Call it when the user states something worth knowing in a later
    conversation: a lasting fact about themselves or their world, a preference, a plan, a
    decision, a change ("I moved to Lisbon", "call me Sam", "I'm vegetarian now"); not for
    greetings, questions or small talk. Write it as a fact that stands alone. The same
    content in the same scope (user_id, conversation_id, type) returns the existing memory
    with deduplicated true. When it replaces an older fact (a new address, employer,
    deadline), search first and name the old memory in supersedes. With infer, the facts
    worth keeping are drawn from a transcript and each remembered."""
    return await call_tool_body(bodies.add_memory, **locals())


async def search_memories(
    query: Annotated[str, Field(description=(
        "what to look for, in the user's words; time words find the memories written "
        "then ('last week', 'yesterday', 'in March', '3 days ago'; a query of only "
        "a time lists that time's memories); no usable words = no results"))],
    user_id: UserId = None,
    conversation_id: ConversationId = None,
    limit: Annotated[int, Field(description="1..100")] = 5,
    types: Annotated[list[MemoryType] | None, Field(description=(
        "only these memory types; default all"))] = None,
    profile: Annotated[str | None, Field(description="ranking profile name; default profile "
                                                     "when absent")] = None,
    match_mode: Annotated[Literal["any", "all", "all_then_any"] | None, Field(description=(
        "any: a result needs one of the words; all: every word; all_then_any: all, else "
        "any when nothing has all; default: the profile's"))] = None,
    as_of: AsOf = None,
    include_superseded: Annotated[bool, Field(description=(
        "also answer facts that no longer hold (superseded or ended), each with "
        "valid_until and superseded_by: to see how a fact changed"))] = False,
    since: Since = None,
    until: Until = None,
    author: AuthorFilter = None,
    tags: TagsFilter = None,
    agent_id: AgentFilter = None,
    run_id: RunFilter = None,
    metadata: MetadataFilter = None,
    now: Now = None,
) -> SearchOut:
    """Recall what is known about the user. Call it before answering a question about the
    user, their past, plans, preferences or people they mentioned, and whenever earlier
    conversations may matter ("what did I say about...", "as usual", "my sister"). Time
    words in the query work: "what did we decide last week" searches that week's memories.
    Answers the memories of one namespace that match the query, best first, each with the
    parts of its score (BM25, recency, importance), its strongest terms and its validity;
    only facts valid now, unless as_of or include_superseded says otherwise. The filters
    (since, until, author, tags, agent_id, run_id, metadata) keep the matches that pass; an
    empty query with a filter lists the matches, newest first."""
    return await call_tool_body(bodies.search_memories, **locals())


async def get_memory(memory_id: MemoryId) -> MemoryOut:
    """One memory with every field (also a forgotten one: deleted_at is set). Call it to
    read a memory whose id a search or list answered, e.g. before changing it."""
    return await call_tool_body(bodies.get_memory, memory_id=memory_id)


async def update_memory(
    memory_id: MemoryId,
    content: Annotated[str | None, Field(description="the corrected text; unchanged when "
                                                     "absent")] = None,
    importance: Annotated[float | None, Field(description="0..1")] = None,
    tags: Annotated[list[str] | None, Field(description="the new labels (replace the old "
                                                        "ones)")] = None,
    type: Annotated[MemoryType | None, Field(description="the new type; unchanged when "
                                                         "absent")] = None,
    metadata: Annotated[dict | None, Field(description="the new metadata object (replaces "
                                                       "the old one)")] = None,
    reason: Reason = "",
    version: Annotated[int | None, Field(description="the version you read; a newer one "
                                                     "refuses the change (conflict)")] = None,
    supersedes: Supersedes = None,
    valid_from: ValidFrom = None,
    supersession: Supersession = None,
) -> MemoryOut:
    """Correct a memory (a typo, a wrong detail, a new importance): a new version; the old
    one stays in its history. When the fact changed in the world (the user moved, changed
    jobs), call add_memory with supersedes instead, so both facts stay in time."""
    args = {k: v for k, v in locals().items() if v is not None}
    return await call_tool_body(bodies.update_memory, **args)


async def delete_memory(memory_id: MemoryId, reason: Reason = "") -> Forgotten:
    """Forget a memory (soft delete: it leaves recall; an editor can restore it). Call it
    when the user asks to forget something or a memory is plainly wrong."""
    return await call_tool_body(bodies.delete_memory, memory_id=memory_id, reason=reason)


async def list_memories(
    user_id: UserId = None,
    conversation_id: Annotated[str | None, Field(
        description="one conversation; empty string = the user-wide memories; null = all")] = None,
    type: Annotated[MemoryType | None, Field(description="only this memory type; default "
                                                         "all")] = None,
    include_forgotten: Annotated[bool, Field(description="also forgotten (deleted) "
                                                         "memories")] = False,
    metadata: MetadataFilter = None,
    cursor: Annotated[str | None, Field(description="next_cursor of the previous page")] = None,
    limit: Annotated[int, Field(description="1..500")] = 20,
    since: Since = None,
    until: Until = None,
    author: AuthorFilter = None,
    tags: TagsFilter = None,
    agent_id: AgentFilter = None,
    run_id: RunFilter = None,
    as_of: Annotated[str | None, Field(description=(
        "ISO 8601: only the facts that held then (default: every fact, whatever its "
        "validity)"))] = None,
    now: Annotated[str | None, Field(description=(
        "ISO 8601: only the facts valid at this moment"))] = None,
) -> MemoryPage:
    """A namespace's memories, newest first, a page at a time (as GET /api/v1/memories).
    Call it to review everything known (e.g. "what do you know about me?"); to answer a
    question, search_memories finds the relevant ones."""
    return await call_tool_body(bodies.list_memories, **locals())


async def promote(
    memory_id: Annotated[str | None, Field(description="a working or short-term memory")] = None,
    session_id: Annotated[str | None, Field(description="with seq: a session message")] = None,
    seq: Annotated[int | None, Field(description="the message's number in the session")] = None,
    reason: Reason = "",
    content: Annotated[str | None, Field(description=(
        "with session_id + seq: the text to write instead of the message's"))] = None,
    type: Annotated[MemoryType | None, Field(description=(
        "with session_id + seq: the memory's type; default long_term"))] = None,
    importance: Annotated[float | None, Field(description=(
        "with session_id + seq: 0..1; default estimated from the text"))] = None,
) -> MemoryOut:
    """Make a working or short-term memory, or a session message, a user-wide long-term
    memory (deduplicated against the user's long-term memories). A session message can be
    edited (content, type, importance) before it is written."""
    return await call_tool_body(bodies.promote, **locals())


async def invalidate_memory(
    memory_id: MemoryId,
    reason: Annotated[str, Field(description="why the fact ended (required)")],
    valid_until: Annotated[str | None, Field(description=(
        "ISO 8601: when it stopped holding; default now"))] = None,
) -> MemoryOut:
    """End a fact with no replacement ("no longer lives in Porto"): it stays readable and
    leaves recall from valid_until. revalidate_memory undoes it."""
    return await call_tool_body(bodies.invalidate_memory, **locals())


async def revalidate_memory(
    memory_id: MemoryId,
    reason: Annotated[str, Field(description="why the fact holds again (required)")],
) -> MemoryOut:
    """Undo an end or a supersession: the fact holds again (valid_until and superseded_by
    cleared, a new version)."""
    return await call_tool_body(bodies.revalidate_memory, **locals())


async def list_conflicts(
    user_id: Annotated[str | None, Field(description=(
        "one namespace; null = every namespace the token reaches"))] = None,
    status: Annotated[Literal["open", "accepted", "rejected"], Field(description=(
        "open (waiting for a decision, the default), accepted or rejected"))] = "open",
    cursor: Annotated[str | None, Field(description="next_cursor of the previous page")] = None,
    limit: Annotated[int | None, Field(description="1..1000; default 100")] = None,
) -> ConflictPage:
    """The review queue: supersessions the server proposed (newer memory makes older no
    longer true), newest first, each with its confidence and evidence."""
    return await call_tool_body(bodies.list_conflicts, **locals())


async def resolve_conflict(
    conflict_id: Annotated[int, Field(description="the conflict's id (list_conflicts)")],
    accept: Annotated[bool, Field(description=(
        "true: older is superseded by newer; false: both hold, not proposed again"))],
    reason: Reason = "",
) -> ConflictOut:
    """Settle a proposed supersession (accept or reject); rejecting an accepted one undoes
    it."""
    return await call_tool_body(bodies.resolve_conflict, **locals())


async def recall_feedback(
    recall_id: Annotated[str, Field(description="the recall_id search_memories answered")],
    memory_id: MemoryId,
    grade: Annotated[StrictInt | None, Field(description=(
        "0 useless or wrong, 1 related, 2 helpful, 3 exactly what was needed; or give "
        "useful instead"))] = None,
    useful: Annotated[StrictBool | None, Field(description=(
        "true: it helped (grade 3); false: it did not (grade 0)"))] = None,
    note: Annotated[str, Field(description="why, e.g. 'outdated: she moved in May'")] = "",
) -> FeedbackOut:
    """Say whether a recalled memory helped answer: call it after search_memories when a
    result was wrong, stale or exactly right. Kept per caller (giving it again replaces
    it); reviewers and the ranking lab read it."""
    return await call_tool_body(bodies.recall_feedback, **locals())


def _hints(*, read_only: bool, destructive: bool = False, idempotent: bool = False,
           title: str) -> ToolAnnotations:
    return ToolAnnotations(title=title, read_only_hint=read_only, destructive_hint=destructive,
                           idempotent_hint=idempotent, open_world_hint=False)


TOOLS = [
    (add_memory, _hints(read_only=False, idempotent=True, title="Remember")),
    (search_memories, _hints(read_only=True, idempotent=True, title="Recall")),
    (get_memory, _hints(read_only=True, idempotent=True, title="Read a memory")),
    (update_memory, _hints(read_only=False, destructive=True, title="Change a memory")),
    (delete_memory, _hints(read_only=False, destructive=True, idempotent=True,
                           title="Forget a memory")),
    (list_memories, _hints(read_only=True, idempotent=True, title="List memories")),
    (promote, _hints(read_only=False, idempotent=True, title="Promote to long-term")),
    (invalidate_memory, _hints(read_only=False, destructive=True, title="End a fact")),
    (revalidate_memory, _hints(read_only=False, idempotent=True,
                               title="Make a fact hold again")),
    (list_conflicts, _hints(read_only=True, idempotent=True, title="Proposed supersessions")),
    (resolve_conflict, _hints(read_only=False, destructive=True,
                              title="Accept or reject a proposed supersession")),
    (recall_feedback, _hints(read_only=False, idempotent=True,
                             title="Say whether a recalled memory helped")),
]
