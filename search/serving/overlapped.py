"""A Redis script call with other work done while Redis answers it.

A recall's freshness check (``feed.lua``) and its database check need the same hit ids and
are independent: sending the script, doing the database read, then reading the script's
reply makes the two waits overlap instead of adding up (``search.serving.feed.feed_reply``).
"""

from redis import exceptions as redis_exceptions

from memories import store


def call(client, script, keys: list[str], args: list, meanwhile):
    """``(reply, meanwhile())``: ``script`` (a redis-py ``Script``) sent with ``keys`` and
    ``args`` as EVALSHA on the node of ``keys[0]``, ``meanwhile()`` run while Redis answers
    it, then its reply read. A connection that fails, and a script Redis does not hold
    (NOSCRIPT), are left to the plain call, which retries and loads; an error of
    ``meanwhile`` (raised) leaves no reply unread on a pooled connection. Raises
    ``redis.RedisError``."""
    node = (client.get_redis_connection(client.get_node_from_key(keys[0]))
            if store.is_cluster(client) else client)
    pool = node.connection_pool
    conn = pool.get_connection()
    sent = False
    try:
        try:
            conn.send_command("EVALSHA", script.sha, len(keys), *keys, *args)
            sent = True
        except (redis_exceptions.ConnectionError, redis_exceptions.TimeoutError):
            conn.disconnect()
        side = meanwhile()
        if sent:
            try:
                return conn.read_response(), side
            except redis_exceptions.NoScriptError:
                pass
            except (redis_exceptions.ConnectionError, redis_exceptions.TimeoutError):
                conn.disconnect()
    except BaseException:
        conn.disconnect()  # a reply may still be on its way: never reuse this connection
        raise
    finally:
        pool.release(conn)
    return script(keys=keys, args=args, client=client), side
