"""Slow and idle clients for `make bench-fairness`: IDLE keep-alive connections that sent one
request and then say nothing (reopened when the server closes them), and SLOW uploads
that send a request body a byte a second (restarted when the server cuts them off). Runs
for SECONDS, then prints what it saw. Only ever connects to 127.0.0.1.

Each client starts at a random moment of its first SPREAD seconds (default 5, the server's
keep-alive; 0: all at once), as independent clients would: started together, the 2,000
would be closed together every keep-alive period and reconnect as one burst of 2,000
connections and requests, which is a reconnect storm, not idle clients."""

import asyncio
import os
import random
import sys

PORT, IDLE, SLOW, SECONDS = (int(a) for a in sys.argv[1:5])
SPREAD = float(os.environ.get("SLOW_CLIENTS_SPREAD", "5"))
seen = {"idle_opened": 0, "slow_started": 0, "slow_answers": {}}


async def idle_client(stop):
    await asyncio.sleep(random.uniform(0, SPREAD))
    while not stop.is_set():
        try:
            reader, writer = await asyncio.open_connection("127.0.0.1", PORT)
            seen["idle_opened"] += 1
            writer.write(b"GET /healthz HTTP/1.1\r\nHost: localhost\r\n\r\n")
            await writer.drain()
            # Read the answer, then hold the connection open until the server closes it.
            while not stop.is_set():
                chunk = await asyncio.wait_for(reader.read(4096), timeout=SECONDS + 5)
                if not chunk:
                    break
            writer.close()
        except (OSError, asyncio.TimeoutError):
            await asyncio.sleep(0.2)


async def slow_client(stop):
    body = b'{"identifier": "nobody@example.test", "password": "x"}'
    await asyncio.sleep(random.uniform(0, SPREAD))
    while not stop.is_set():
        try:
            reader, writer = await asyncio.open_connection("127.0.0.1", PORT)
            seen["slow_started"] += 1
            writer.write(
                b"POST /api/v1/system/auth/login/ HTTP/1.1\r\nHost: localhost\r\n"
                b"Content-Type: application/json\r\nContent-Length: %d\r\n\r\n" % len(body)
            )
            for byte in body:
                if stop.is_set():
                    break
                writer.write(bytes([byte]))
                await writer.drain()
                try:
                    head = await asyncio.wait_for(reader.read(64), timeout=1.0)
                except asyncio.TimeoutError:
                    continue
                status = head.split(b" ")[1].decode() if head.startswith(b"HTTP/") else "closed"
                seen["slow_answers"][status] = seen["slow_answers"].get(status, 0) + 1
                break
            writer.close()
        except OSError:
            await asyncio.sleep(0.2)


async def main():
    stop = asyncio.Event()
    tasks = [asyncio.create_task(idle_client(stop)) for _ in range(IDLE)]
    tasks += [asyncio.create_task(slow_client(stop)) for _ in range(SLOW)]
    await asyncio.sleep(SECONDS)
    stop.set()
    await asyncio.wait(tasks, timeout=5)
    print(f"slow clients: {IDLE} idle keep-alive connections (opened {seen['idle_opened']} times), "
          f"{SLOW} byte-a-second uploads (started {seen['slow_started']} times, answers {seen['slow_answers']})")


asyncio.run(main())
