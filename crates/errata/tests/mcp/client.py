"""Drives `errata mcp` with the official MCP Python SDK (PyPI `mcp`), as an assistant does.

Usage: python3 client.py ERRATA_BINARY [errata mcp arguments...]
Prints one JSON object: what each call returned (or the JSON-RPC error it raised), for
crates/errata/tests/mcp.rs to assert on. Exits non-zero only when the session itself fails.
"""

import asyncio
import json
import sys

from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client
from mcp.shared.exceptions import MCPError


def text_of(result):
    """The text content of a tool result, and whether it is an error result."""
    texts = [c.text for c in result.content if getattr(c, "type", "") == "text"]
    return {"is_error": bool(result.is_error), "text": "\n".join(texts)}


async def call(session, name, arguments):
    try:
        return text_of(await session.call_tool(name, arguments))
    except MCPError as e:
        return {"rpc_error": {"code": e.error.code, "message": e.error.message}}


async def main():
    binary, *args = sys.argv[1:]
    params = StdioServerParameters(command=binary, args=["mcp", *args])
    out = {}
    async with stdio_client(params) as (read, write):
        async with ClientSession(read, write) as session:
            init = await session.initialize()
            out["server"] = init.server_info.name
            out["protocol"] = init.protocol_version
            tools = await session.list_tools()
            out["tools"] = sorted(t.name for t in tools.tools)
            out["schemas"] = {t.name: t.input_schema for t in tools.tools}
            out["annotations"] = {
                t.name: (t.annotations.model_dump(exclude_none=True, by_alias=True) if t.annotations else None)
                for t in tools.tools
            }
            out["match"] = await call(
                session,
                "match_error",
                {"text": "step 10\nRuntimeError: CUDA error: misaligned address\n"},
            )
            out["match_zh"] = await call(
                session, "match_error", {"text": "CUDA error: an illegal memory access was encountered", "lang": "zh"}
            )
            out["match_none"] = await call(session, "match_error", {"text": "all good"})
            # A big, real-shaped log: 500 OOM failures among training progress, then other
            # known errors, as a user pastes it.
            lines = []
            for i in range(500):
                lines.append(f"step {i} loss 0.{i % 97:02d} lr 3e-4")
                lines.append(
                    "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 20.00 MiB. "
                    "GPU 0 has a total capacity of 79.19 GiB of which 12.50 MiB is free."
                )
            lines.append("RuntimeError: CUDA error: an illegal memory access was encountered")
            lines.append("OSError: (External) CUBLAS error(13).")
            out["match_big"] = await call(session, "match_error", {"text": "\n".join(lines)})
            out["entry"] = await call(session, "get_entry", {"id": "cuda/misaligned-address"})
            out["search"] = await call(session, "search", {"query": "misaligned address", "limit": 5})
            out["search_pasted"] = await call(
                session, "search", {"query": "RuntimeError: CUDA error: an illegal memory access was encountered"}
            )
            out["search_zh"] = await call(session, "search", {"query": "非法内存访问", "lang": "zh"})
            out["search_syntax"] = await call(session, "search", {"query": '"NEAR( * OR'})
            out["decode"] = await call(session, "decode", {"value": "13"})
            out["decode_family"] = await call(session, "decode", {"value": "0x2bc", "family": "cuda"})
            # Incidents and audit on the repository's real fixtures (read here, sent as text).
            import os
            case = os.path.join("tests", "fixtures", "incidents", "xid79-launch-failure-watchdog")
            logs = [
                {"name": name, "text": open(os.path.join(case, name), encoding="utf-8").read()}
                for name in sorted(os.listdir(case)) if name.endswith(".log")
            ]
            out["incidents"] = await call(session, "incidents", {"logs": logs})
            out["bad_window"] = await call(session, "incidents", {"logs": logs, "window_minutes": -1})
            report = open(
                os.path.join("tests", "fixtures", "env", "collect_env_cpu_only_torch222_rtx4080laptop.txt"),
                encoding="utf-8",
            ).read()
            out["audit"] = await call(session, "audit", {"report": report})
            out["audit_zh"] = await call(session, "audit", {"report": report, "lang": "zh"})
            out["outcome"] = await call(
                session,
                "report_outcome",
                {"entry": "cuda/misaligned-address", "item": "workaround:0", "outcome": "worked",
                 "reporter": "github:mcp-test", "env": {"gpu": "NVIDIA H200"}, "date": "2026-11-20"},
            )
            out["bad_outcome"] = await call(
                session,
                "report_outcome",
                {"entry": "cuda/misaligned-address", "item": "workaround:99", "outcome": "maybe", "reporter": "x"},
            )
            # Bad input: each must be a JSON-RPC error (or an error result), never a crash.
            out["bad_entry"] = await call(session, "get_entry", {"id": "cuda/no-such-entry"})
            out["bad_lang"] = await call(session, "match_error", {"text": "x", "lang": "fr"})
            out["bad_limit"] = await call(session, "search", {"query": "x", "limit": 0})
            out["bad_family"] = await call(session, "decode", {"value": "1", "family": "cuda13"})
            out["bad_args"] = await call(session, "match_error", {"txt": 3})
            out["bad_type"] = await call(session, "match_error", {"text": 3})
            out["no_args"] = await call(session, "get_entry", None)
            out["bad_tool"] = await call(session, "no_such_tool", {})
            resources = await session.list_resources()
            out["resources"] = len(resources.resources)
            first = resources.resources[0]
            read = await session.read_resource(first.uri)
            out["resource_uri"] = str(first.uri)
            out["resource_text"] = read.contents[0].text
            try:
                await session.read_resource("errata://entry/no/such")
                out["bad_resource"] = "no error"
            except MCPError as e:
                out["bad_resource"] = {"code": e.error.code, "message": e.error.message}
            # Still alive after all of that.
            out["after"] = await call(session, "get_entry", {"id": "cuda/out-of-memory"})
    print(json.dumps(out))


asyncio.run(main())
