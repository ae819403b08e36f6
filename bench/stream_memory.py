"""Memory of a Parley under event-stream clients that never read (issue 8, section 5).

Starts the fake upstream and the given parley binary, has it stream one finished reply of about
--reply-bytes, then opens --clients raw sockets (small SO_RCVBUF) that request the reply's event
stream and never read. Prints the server's RSS before, with the clients, and after they left.

  python3 bench/stream_memory.py .build/release/parley --clients 400 --reply-bytes 1000000

"with clients" is taken once RSS stopped growing for 2 s (the peak seen until then is printed too);
"after" once RSS stayed within 1 MiB for 3 s after the clients closed their sockets (at most 60 s).
"""

import argparse
import json
import os
import re
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)


def rss_mib(pid):
    with open("/proc/%d/status" % pid) as status:
        for line in status:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024.0
    return 0.0


def start(argv, env=None, pattern=None):
    process = subprocess.Popen(argv, env=env, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    line = process.stdout.readline().decode().strip()
    match = re.search(pattern, line)
    if not match:
        process.kill()
        sys.exit("unexpected first line %r from %s" % (line, argv[0]))
    return process, int(match.group(1))


def request(port, method, path, body=None):
    data = json.dumps(body).encode() if body is not None else None
    req = urllib.request.Request("http://127.0.0.1:%d%s" % (port, path), data=data, method=method,
                                 headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(req, timeout=120) as response:
        return json.loads(response.read() or b"{}")


def settle(pid, quiet_s=2.0, limit_s=60.0):
    """(RSS once it has not grown for quiet_s (or after limit_s), the peak seen)."""
    deadline = time.time() + limit_s
    best, since = rss_mib(pid), time.time()
    while time.time() < deadline and time.time() - since < quiet_s:
        time.sleep(0.1)
        now = rss_mib(pid)
        if now > best + 1:
            best, since = now, time.time()
    return rss_mib(pid), best


def steady(pid, quiet_s=3.0, limit_s=60.0):
    """RSS once it stayed within 1 MiB for quiet_s (or after limit_s)."""
    deadline = time.time() + limit_s
    last, since = rss_mib(pid), time.time()
    while time.time() < deadline and time.time() - since < quiet_s:
        time.sleep(0.1)
        now = rss_mib(pid)
        if abs(now - last) > 1:
            last, since = now, time.time()
    return rss_mib(pid)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("binary")
    parser.add_argument("--clients", type=int, default=400)
    parser.add_argument("--reply-bytes", type=int, default=1_000_000)
    parser.add_argument("--env", action="append", default=[], help="extra NAME=VALUE for parley")
    args = parser.parse_args()

    workdir = tempfile.mkdtemp(prefix="parley-memory-")
    fake, fake_port = start([sys.executable, os.path.join(HERE, "fake_upstream.py")], pattern=r"port (\d+)")
    env = {k: v for k, v in os.environ.items() if not k.startswith("PARLEY_")}
    env.update({
        "PARLEY_OPENAI_BASE_URL": "http://127.0.0.1:%d/v1" % fake_port,
        "PARLEY_OPENAI_MODELS": "bench",
        "PARLEY_MAX_REPLY_BYTES": str(2 * args.reply_bytes),
        "PARLEY_RETAIN_FINISHED_SECONDS": "600",
        # Every client is the one local user: past the default 32 open streams per user they would get 429.
        "PARLEY_MAX_STREAMS_PER_USER": str(max(32, args.clients + 8)),
    })
    for item in args.env:
        name, _, value = item.partition("=")
        env[name] = value
    parley, port = start([args.binary, "--port", "0", "--db", os.path.join(workdir, "m.db"),
                          "--public", os.path.join(REPO, "Public")], env=env,
                         pattern=r"listening on http://[^:]+:(\d+)")
    sockets = []
    try:
        conversation = request(port, "POST", "/api/conversations", {"title": "memory"})["id"]
        chunks = max(1, args.reply_bytes // 14)  # fake chunks are about 14 bytes of text
        turn = request(port, "POST", "/api/conversations/%s/messages" % conversation,
                       {"content": "bench chunks=%d interval_ms=0" % chunks, "model": "openai:bench"})
        message = turn["assistant_message"]["id"]
        while request(port, "GET", "/api/messages/%s" % message)["status"] == "streaming":
            time.sleep(0.2)
        size = len(request(port, "GET", "/api/messages/%s" % message)["content"].encode())
        time.sleep(1)
        before = steady(parley.pid)
        for _ in range(args.clients):
            client = socket.socket()
            client.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
            client.connect(("127.0.0.1", port))
            client.sendall(("GET /api/messages/%s/stream HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n" % message).encode())
            sockets.append(client)
        held, peak = settle(parley.pid)
        for client in sockets:
            client.close()
        sockets = []
        after = steady(parley.pid)
        print("reply %d bytes, %d non-reading clients: RSS before %.0f MiB, with clients %.0f MiB "
              "(peak %.0f), after %.0f MiB" % (size, args.clients, before, held, peak, after))
    finally:
        for client in sockets:
            client.close()
        for process in (parley, fake):
            process.terminate()
            try:
                process.wait(10)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()
        shutil.rmtree(workdir, ignore_errors=True)


if __name__ == "__main__":
    main()
