"""Legacy (Mcp-Session-Id) sessions of the official Python SDK (mcp==2.3.0) through a load
balancer in front of several `baremcp --http` processes.

usage: legacy_sessions.py BALANCER_URL PID_BY_UPSTREAM_JSON

The balancer names the process that answered each response in an `X-Upstream` header (the
last one, when it tried several). PID_BY_UPSTREAM_JSON maps those names to process ids.

1. Twelve clients in legacy mode open a session each and keep it open: initialize,
   tools/list, three tools/call. Every response of a session comes from the process that
   answered its initialize, and the sessions are spread over the processes.
2. The process holding the most sessions is killed (SIGKILL). Each client calls again: those
   on the other processes are served by the same process as before; those on the killed one
   get 404 (the SDK's "Session terminated") and start again with a new client, whose session
   lands on a live process and works.

Prints one line per session (`SESSION=<id> UPSTREAM=<name>`), for the script to check each
process's own log, then a summary.
"""

import asyncio
import logging
import collections
import contextlib
import json
import os
import signal
import sys

import httpx2
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

URL = sys.argv[1]
PIDS = json.loads(sys.argv[2])
SESSIONS = 12
# The SDK warns when the DELETE of a session lost with its process gets 404: expected here.
logging.getLogger("mcp").setLevel(logging.ERROR)


class Recorder:
    """Every exchange one client makes: (session sent, status, upstream, session minted)."""

    def __init__(self):
        self.exchanges = []

    async def on_response(self, response):
        upstream = response.headers.get("x-upstream", "").split(",")[-1].strip()
        sent = response.request.headers.get("mcp-session-id")
        minted = response.headers.get("mcp-session-id")
        self.exchanges.append((sent, response.status_code, upstream, minted))

    def session(self):
        minted = [m for (_, _, _, m) in self.exchanges if m]
        return minted[0] if minted else None

    def upstreams(self, session):
        """The processes that answered this session's successful requests."""
        return {u for (sent, status, u, minted) in self.exchanges if (sent or minted) == session and status < 300}


async def open_client(stack):
    recorder = Recorder()
    http = httpx2.AsyncClient(event_hooks={"response": [recorder.on_response]}, timeout=30)
    await stack.enter_async_context(http)
    client = Client(streamable_http_client(URL, http_client=http), mode="legacy")
    await stack.enter_async_context(client)
    tools = await client.list_tools()
    assert any(t.name == "hello" for t in tools.tools), tools
    return client, recorder


async def call(client, name):
    result = await client.call_tool("hello", {"name": name})
    assert result.content[0].text == f"Hello, {name}!", result


async def main():
    async with contextlib.AsyncExitStack() as stack:
        clients = []
        for i in range(SESSIONS):
            client, recorder = await open_client(stack)
            for j in range(3):
                await call(client, f"s{i}c{j}")
            clients.append((client, recorder))

        owner = {}
        for client, recorder in clients:
            session = recorder.session()
            upstreams = recorder.upstreams(session)
            if len(upstreams) != 1:
                sys.exit(f"session {session} was answered by {upstreams}, not by one process")
            owner[session] = upstreams.pop()
        spread = collections.Counter(owner.values())
        # A hashing balancer spreads new sessions at random: at least two processes, so that
        # killing one leaves sessions on another.
        if not set(spread) <= set(PIDS) or len(spread) < 2:
            sys.exit(f"the sessions were not spread over the processes: {dict(spread)}")
        print(f"legacy: {SESSIONS} sessions, each answered by one process: {dict(sorted(spread.items()))}")

        victim = spread.most_common(1)[0][0]
        os.kill(PIDS[victim], signal.SIGKILL)
        await asyncio.sleep(0.5)

        lost = kept = restarted = 0
        for i, (client, recorder) in enumerate(clients):
            session = recorder.session()
            before = len(recorder.exchanges)
            try:
                await call(client, f"after{i}")
            except Exception as error:  # the SDK's McpError("Session terminated") on 404
                statuses = [status for (_, status, _, _) in recorder.exchanges[before:]]
                if owner[session] != victim or statuses[-1:] != [404]:
                    sys.exit(f"session {session} on {owner[session]} failed: {error!r}, statuses {statuses}")
                lost += 1
                # Start again, as the spec says a client does on 404: a new session.
                async with contextlib.AsyncExitStack() as again:
                    fresh, fresh_recorder = await open_client(again)
                    await call(fresh, f"again{i}")
                    new_session = fresh_recorder.session()
                    (landed,) = fresh_recorder.upstreams(new_session)
                    if landed == victim:
                        sys.exit(f"a new session landed on the killed process {victim}")
                    print(f"SESSION={new_session} UPSTREAM={landed}")
                    restarted += 1
                continue
            if owner[session] == victim:
                sys.exit(f"session {session} of the killed process {victim} was still served")
            if recorder.upstreams(session) != {owner[session]}:
                sys.exit(f"session {session} moved: {recorder.upstreams(session)}")
            kept += 1
        for session, upstream in owner.items():
            print(f"SESSION={session} UPSTREAM={upstream}")
        if lost != spread[victim] or kept != SESSIONS - lost or restarted != lost:
            sys.exit(f"lost {lost}, kept {kept}, restarted {restarted}; the victim had {spread[victim]}")
        print(
            f"legacy: killed {victim}: its {lost} sessions got 404 and started again elsewhere; "
            f"the other {kept} kept their process"
        )
        # Leaving the stack closes every client: a DELETE for each session still alive.


def leaves(error):
    """The errors at the bottom of nested exception groups: the ones that say what happened."""
    if isinstance(error, BaseExceptionGroup):
        return [leaf for inner in error.exceptions for leaf in leaves(inner)]
    return [error]


try:
    asyncio.run(main())
except BaseExceptionGroup as group:
    sys.exit("the client failed: " + "; ".join(repr(leaf) for leaf in leaves(group)))
