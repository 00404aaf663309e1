"""Small socket probes of a NAT's behaviour, run inside the lab's namespaces by the NAT tests.

    python -m tests.netlab.nat_probe echo ADDRESS... PORT
        (an outside machine) accept TCP connections on each ADDRESS and answer each with the
        address and port it came from, ``ip:port``, as that machine sees it: the mapping.
    python -m tests.netlab.nat_probe home PORT TARGET...
        (a home machine) listen on PORT, then connect from PORT to each TARGET (``ip:port``)
        and print ``MAPPED ip:port`` for each answer; then answer every connection that comes
        in with ``home`` until killed.
    python -m tests.netlab.nat_probe knock SOURCE TARGET
        (an outside machine) connect from address SOURCE to TARGET; print ``IN`` if the home
        answered, ``REFUSED`` on a reset, ``SILENT`` if nothing came back within 2 s.
"""

from __future__ import annotations

import socket
import sys
import threading

WAIT_S = 2.0


def _reusable() -> socket.socket:
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEPORT, 1)
    return sock


def _split(text: str) -> tuple[str, int]:
    host, port = text.rsplit(":", 1)
    return host, int(port)


def echo(addresses: list[str], port: int) -> None:
    def serve(address: str) -> None:
        listener = _reusable()
        listener.bind((address, port))
        listener.listen(16)
        while True:
            conn, (ip, their_port) = listener.accept()
            conn.sendall(f"{ip}:{their_port}\n".encode())
            conn.close()

    threads = [threading.Thread(target=serve, args=(a,), daemon=True) for a in addresses]
    for t in threads:
        t.start()
    print("ECHOING", flush=True)
    threads[0].join()


def home(port: int, targets: list[str]) -> None:
    listener = _reusable()
    listener.bind(("0.0.0.0", port))
    listener.listen(16)
    kept = []
    for target in targets:
        sock = _reusable()
        sock.bind(("0.0.0.0", port))
        sock.settimeout(WAIT_S * 2)
        sock.connect(_split(target))
        print("MAPPED", sock.recv(64).decode().strip(), flush=True)
        kept.append(sock)  # the mapping stays in use
    print("LISTENING", flush=True)
    while True:
        conn, _ = listener.accept()
        conn.sendall(b"home\n")
        conn.close()


def knock(source: str, target: str) -> None:
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.bind((source, 0))
    sock.settimeout(WAIT_S)
    try:
        sock.connect(_split(target))
        print("IN" if sock.recv(16).startswith(b"home") else "OTHER")
    except ConnectionRefusedError:
        print("REFUSED")
    except OSError:  # a timeout: the router dropped it
        print("SILENT")


if __name__ == "__main__":
    what, *args = sys.argv[1:]
    if what == "echo":
        echo(args[:-1], int(args[-1]))
    elif what == "home":
        home(int(args[0]), args[1:])
    else:
        knock(args[0], args[1])
