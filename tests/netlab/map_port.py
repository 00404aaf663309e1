"""Run inside a home namespace by the port-mapping test: map TCP port ARGV[2] by method ARGV[1]
with a 2-second lease, accept one connection through it, hold it until it has been renewed,
then leave (the mapping is removed). Prints MAPPED, ACCEPTED, DONE and the module's log."""

from __future__ import annotations

import logging
import sys

import trio

from dernier_p2p.net.portmap import Attempt, mapped

LINES: list[str] = []


class _Keep(logging.Handler):
    def emit(self, record: logging.LogRecord) -> None:
        LINES.append(record.getMessage())


async def main(method: str, port: int) -> None:
    attempt = Attempt()
    listeners = await trio.open_tcp_listeners(port)
    async with mapped(port, attempt, methods=(method,), lease_s=2) as mapping:
        print("MAPPED", mapping, attempt.notes, flush=True)
        if mapping is None:
            return
        with trio.move_on_after(15):
            stream = await listeners[0].accept()
            print("ACCEPTED", flush=True)
            await stream.aclose()
        with trio.move_on_after(15):
            while not any("renewed" in line for line in LINES):
                await trio.sleep(0.05)
    print("DONE", flush=True)


if __name__ == "__main__":
    logging.basicConfig(level=logging.INFO, stream=sys.stdout, format="%(message)s")
    logging.getLogger().addHandler(_Keep())
    trio.run(main, sys.argv[1], int(sys.argv[2]))
