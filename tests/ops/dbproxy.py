"""A TCP proxy in front of PostgreSQL that cuts every connection on a signal (tests/ops/soak.sh).

    python3 dbproxy.py --listen PORT --upstream HOST:PORT

Connections are passed through byte for byte. Signals:
  SIGUSR1  reset every open connection (RST on both sides, as a network failure or a
           failover does: the peers learn it on their next read or write, mid-query too)
  SIGUSR2  close every open connection (FIN on both sides)
  SIGTERM  stop
Each cut prints one line `cut N connections (reset|close)`. New connections are accepted
again at once. Python standard library only.
"""
import argparse
import asyncio
import signal
import socket
import struct
import sys


class Proxy:
    def __init__(self, upstream_host, upstream_port):
        self.upstream = (upstream_host, upstream_port)
        self.pairs = set()  # (client writer, server writer)

    async def handle(self, client_reader, client_writer):
        try:
            server_reader, server_writer = await asyncio.open_connection(*self.upstream)
        except OSError:
            client_writer.close()
            return
        pair = (client_writer, server_writer)
        self.pairs.add(pair)
        try:
            await asyncio.gather(self.pump(client_reader, server_writer),
                                 self.pump(server_reader, client_writer))
        finally:
            self.pairs.discard(pair)
            for writer in pair:
                writer.close()

    @staticmethod
    async def pump(reader, writer):
        try:
            while True:
                data = await reader.read(65536)
                if not data:
                    break
                writer.write(data)
                await writer.drain()
        except (OSError, asyncio.CancelledError):
            pass
        finally:
            # Pass the end of one direction on as the end of the other.
            if not writer.is_closing():
                writer.close()

    def cut(self, reset):
        pairs = list(self.pairs)
        self.pairs.clear()
        for pair in pairs:
            for writer in pair:
                if reset:
                    sock = writer.get_extra_info("socket")
                    if sock is not None:
                        try:
                            # A zero linger time turns the close into a reset.
                            sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
                        except OSError:
                            pass
                    writer.transport.abort()
                else:
                    writer.close()
        print(f"cut {len(pairs)} connections ({'reset' if reset else 'close'})", flush=True)


async def main():
    p = argparse.ArgumentParser()
    p.add_argument("--listen", type=int, required=True)
    p.add_argument("--upstream", required=True, help="HOST:PORT of PostgreSQL")
    args = p.parse_args()
    host, port = args.upstream.rsplit(":", 1)
    proxy = Proxy(host, int(port))
    server = await asyncio.start_server(proxy.handle, "127.0.0.1", args.listen, reuse_address=True)
    loop = asyncio.get_running_loop()
    stop = asyncio.Event()
    loop.add_signal_handler(signal.SIGUSR1, proxy.cut, True)
    loop.add_signal_handler(signal.SIGUSR2, proxy.cut, False)
    loop.add_signal_handler(signal.SIGTERM, stop.set)
    loop.add_signal_handler(signal.SIGINT, stop.set)
    print(f"proxy 127.0.0.1:{args.listen} -> {args.upstream}", flush=True)
    async with server:
        await stop.wait()
    proxy.cut(True)
    return 0


if __name__ == "__main__":
    sys.exit(asyncio.run(main()))
