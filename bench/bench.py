"""Parley relay bench: Parley against nginx relaying the same fake OpenAI-compatible upstream.

Standard library only. Everything runs on 127.0.0.1, is bounded in count and time, and every process
the bench starts (fake upstream, two Parley servers, nginx) is stopped when it ends, also on error or
SIGTERM. Each figure is measured `--reps` times, the targets interleaved within a repetition so machine
noise spreads evenly; the table shows medians.

Figures:
- relay latency of one paced stream (client receive time minus upstream send time, both
  CLOCK_MONOTONIC): Parley with PARLEY_FRAME_INTERVAL_MS=0 and the default 25, and nginx.
- server CPU (utime+stime from /proc/PID/stat) per 1,000 relayed upstream events, K concurrent
  unpaced streams each on its own generation: Parley text mode (frame 25 and 0), Parley html mode,
  and the nginx worker.
- fan-out: one generation, N subscribers of the same message's stream: Parley CPU per 1,000
  delivered events.
- small JSON GETs per second: wrk against Parley's /api/health and nginx's `return 200`.
"""

import argparse
import asyncio
import json
import math
import os
import platform
import re
import resource
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import uuid

sys.modules.setdefault("bench", sys.modules[__name__])  # scale.py imports this module as `bench`
import scale  # noqa: E402  (issue 10's and 23's start and relay figures)
import goals  # noqa: E402  (the goal table)

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)
CLK_TCK = os.sysconf("SC_CLK_TCK")
START_TIMEOUT_S = 15.0
REQUEST_TIMEOUT_S = 15.0
STREAM_TIMEOUT_S = 60.0
PHASES = ["startup", "latency", "cpu", "fanout", "wrk", "setup", "scale", "idle"]
SETTLE_S = 0.15  # after the last byte, before reading CPU: the server finishes its bookkeeping
TOKEN = re.compile(rb"w(\d+)")


class BenchError(Exception):
    """A failure worth one clear line to the user."""


# MARK: - Processes


class Processes:
    """Every child process the bench started; `stop_all` ends each by its own id (and its group)."""

    def __init__(self):
        self.children = []

    def start(self, name, argv, **kwargs):
        try:
            process = subprocess.Popen(argv, start_new_session=True, **kwargs)
        except OSError as error:
            raise BenchError("cannot start %s (%s): %s" % (name, argv[0], error))
        self.children.append((name, process))
        return process

    def stop_all(self):
        for name, process in reversed(self.children):
            stop(process, signal.SIGTERM if name != "nginx" else signal.SIGQUIT)
        self.children.clear()


def stop(process, first_signal):
    if process.poll() is not None:
        return
    try:
        os.killpg(process.pid, first_signal)
    except ProcessLookupError:
        return
    try:
        process.wait(timeout=5)
    except subprocess.TimeoutExpired:
        try:
            os.killpg(process.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        process.wait(timeout=5)


def api_call(connection, method, path, body=None, headers=None):
    """One JSON API call over a keep-alive `http.client` connection: `body` is a JSON-serialisable value
    (or None); returns (status, the answer's headers as a dict with lower-case names, body bytes)."""
    headers = dict(headers or {})
    data = None
    if body is not None:
        headers["Content-Type"] = "application/json"
        data = body if isinstance(body, (bytes, bytearray)) else json.dumps(body).encode()
    connection.request(method, path, body=data, headers=headers)
    response = connection.getresponse()
    return response.status, {name.lower(): value for name, value in response.getheaders()}, response.read()


def read_line(process, deadline_s, what):
    """The first stdout line of `process`, or BenchError after `deadline_s`."""
    import selectors
    selector = selectors.DefaultSelector()
    selector.register(process.stdout, selectors.EVENT_READ)
    end = time.monotonic() + deadline_s
    line = b""
    while not line.endswith(b"\n"):
        remaining = end - time.monotonic()
        if remaining <= 0 or not selector.select(remaining):
            raise BenchError("%s did not print its start line within %.0f s" % (what, deadline_s))
        byte = os.read(process.stdout.fileno(), 1)
        if not byte:
            raise BenchError("%s exited before it was ready (status %s)" % (what, process.wait()))
        line += byte
    selector.close()
    return line.decode().strip()


def cpu_ticks(pid, reaped_children=False):
    """utime+stime of a process (all its threads, live and exited), in clock ticks; with
    `reaped_children`, plus cutime+cstime (its children that exited and were waited for)."""
    with open("/proc/%d/stat" % pid, "rb") as handle:
        data = handle.read()
    fields = data[data.rfind(b")") + 2:].split()
    return sum(int(field) for field in fields[11:15 if reaped_children else 13])


def cpu_ns_by_thread(pid):
    """On-CPU nanoseconds of each live thread of a process (/proc/PID/task/TID/schedstat)."""
    times = {}
    try:
        tids = os.listdir("/proc/%d/task" % pid)
    except OSError:
        return times
    for tid in tids:
        try:
            with open("/proc/%d/task/%s/schedstat" % (pid, tid)) as handle:
                times[tid] = int(handle.read().split()[0])
        except (OSError, ValueError, IndexError):
            pass  # the thread just ended
    return times


class CPUMeter:
    """CPU a process used between `start` and `stop`, two ways: schedstat (nanoseconds, per thread:
    exact, but loses the share of a thread that ends inside the window) and utime+stime from
    /proc/PID/stat (counts ended threads, but in clock ticks of 10 ms)."""

    def __init__(self, pid):
        self.pid = pid

    def start(self):
        self.ticks, self.threads = cpu_ticks(self.pid), cpu_ns_by_thread(self.pid)

    def stop(self):
        """(schedstat ms, utime+stime ms)."""
        after = cpu_ns_by_thread(self.pid)
        precise = sum(ns - self.threads.get(tid, 0) for tid, ns in after.items())
        return precise / 1e6, (cpu_ticks(self.pid) - self.ticks) * 1000.0 / CLK_TCK


def free_port():
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def children_of(pid):
    try:
        with open("/proc/%d/task/%d/children" % (pid, pid)) as handle:
            return [int(p) for p in handle.read().split()]
    except OSError:
        found = []
        for entry in os.listdir("/proc"):
            if entry.isdigit():
                try:
                    with open("/proc/%s/stat" % entry, "rb") as handle:
                        data = handle.read()
                    if int(data[data.rfind(b")") + 2:].split()[1]) == pid:
                        found.append(int(entry))
                except (OSError, ValueError, IndexError):
                    pass
        return found


def start_fake(processes, workdir):
    process = processes.start("fake upstream", [sys.executable, os.path.join(HERE, "fake_upstream.py")],
                              stdout=subprocess.PIPE, stderr=open(os.path.join(workdir, "fake.log"), "wb"))
    line = read_line(process, START_TIMEOUT_S, "the fake upstream")
    match = re.fullmatch(r"port (\d+)", line)
    if not match:
        raise BenchError("the fake upstream printed %r" % line)
    return process, int(match.group(1))


def start_parley(processes, binary, workdir, fake_port, frame_ms, name, bench_limits=True):
    """A Parley server on a free port; `bench_limits`: the raised caps the bench needs (else defaults)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("PARLEY_")}
    env.update({
        "PARLEY_OPENAI_BASE_URL": "http://127.0.0.1:%d/v1" % fake_port,
        "PARLEY_OPENAI_MODELS": "bench",
    })
    if bench_limits:
        env.update(BENCH_LIMITS)
        env["PARLEY_FRAME_INTERVAL_MS"] = str(frame_ms)
    log_path = os.path.join(workdir, "%s.log" % name)
    argv = [binary, "--port", "0", "--db", os.path.join(workdir, "%s.db" % name),
            "--public", os.path.join(REPO, "Public")]
    process = processes.start(name, argv, env=env, stdout=subprocess.PIPE, stderr=open(log_path, "wb"))
    try:
        line = read_line(process, START_TIMEOUT_S, "parley (%s)" % name)
    except BenchError as error:
        raise BenchError("%s; its log (%s) ends with:\n%s" % (error, log_path, tail_of(log_path)))
    match = re.fullmatch(r"listening on http://[^:]+:(\d+)", line)
    if not match:
        raise BenchError("parley printed %r instead of `listening on http://HOST:PORT`" % line)
    return process, int(match.group(1))


BENCH_LIMITS = {
    # The bench runs up to 1,000 generations at once from one (local) user, and holds 10,000 idle
    # event streams (plus the active ones) from 127.0.0.1.
    "PARLEY_MAX_GENERATIONS": "1000",
    "PARLEY_MAX_GENERATIONS_PER_USER": "1000",
    "PARLEY_USER_MESSAGES_PER_MINUTE": "100000",
    "PARLEY_MAX_CONNECTIONS": "12000",
    "PARLEY_MAX_CONNECTIONS_PER_IP": "12000",
    # ... all as that one user, far past the default cap of 32 open streams per user.
    "PARLEY_MAX_STREAMS_PER_USER": "12000",
    "PARLEY_LISTEN_BACKLOG": "4096",
    # The idle case holds one gated reply open for up to a minute or two.
    "PARLEY_UPSTREAM_IDLE_TIMEOUT": "300",
}


def measure_startup(binary, env):
    """Issue 23's "< 0.2 s to listening, ~30 MiB idle": the binary with default settings started on a fresh
    database, then again on that database: for each start the seconds from spawning it to its
    `listening on` line, the CPU it used until then (all threads, utime+stime, 10 ms ticks), and its RSS
    (KiB) one second later, before any request."""
    workdir = tempfile.mkdtemp(prefix="parley-startup-")
    figures = {}
    try:
        for which in ("fresh", "restart"):
            processes = Processes()
            try:
                began = time.monotonic()
                process, _ = start_parley(processes, binary, workdir, env["fake_port"], 25, "startup",
                                          bench_limits=False)
                listening = time.monotonic() - began
                cpu = cpu_ticks(process.pid) / CLK_TCK
                time.sleep(1.0)
                with open("/proc/%d/status" % process.pid) as handle:
                    status = dict(line.split(":", 1) for line in handle if ":" in line)
                kib = lambda name: int(status.get(name, "0 kB").split()[0])
                with open("/proc/%d/maps" % process.pid) as handle:
                    libraries = {line.split()[-1] for line in handle if ".so" in line}
                figures.update({which + "_s": listening, which + "_cpu_s": cpu, which + "_rss_kib": kib("VmRSS"),
                                which + "_anon_kib": kib("RssAnon"), which + "_file_kib": kib("RssFile"),
                                "libraries": len(libraries)})
            finally:
                processes.stop_all()
        return figures
    finally:
        shutil.rmtree(workdir, ignore_errors=True)


def perf_recorder(args, log):
    """With --perf-dir: a callable (pid, tag) that starts `perf record -e cpu-clock --call-graph dwarf` on
    the server and returns the callable that stops it (SIGINT, then waits for perf to write its file)."""
    if not args.perf_dir:
        return None
    perf = shutil.which("perf")
    if not perf:
        raise BenchError("--perf-dir needs perf (Debian package linux-perf)")
    os.makedirs(args.perf_dir, exist_ok=True)

    def record(pid, tag):
        # System-wide, the server's samples picked out later by its pid (the file name holds it): `-p PID`
        # misses threads a server starts per connection after perf has attached (libmicrohttpd's
        # thread-per-connection mode in older builds).
        path = os.path.join(args.perf_dir, "%s-pid%d.data" % (tag, pid))
        process = subprocess.Popen([perf, "record", "-q", "-e", "cpu-clock", "-F", str(args.perf_freq),
                                    "--call-graph", "dwarf,%d" % args.perf_stack, "-a", "-o", path],
                                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
        time.sleep(0.5)  # perf attaches to every thread before the run begins

        def stop_recording():
            try:
                os.killpg(process.pid, signal.SIGINT)
                process.wait(timeout=120)
            except (ProcessLookupError, subprocess.TimeoutExpired):
                stop(process, signal.SIGKILL)
            log("    perf: %s" % path)

        return stop_recording

    return record


def tail_of(path, lines=15):
    try:
        with open(path, errors="replace") as handle:
            return "".join(handle.readlines()[-lines:])
    except OSError:
        return "(no log)"


NGINX_CONF = """\
daemon off;
master_process on;
worker_processes 1;
worker_rlimit_nofile 16384;
pid {dir}/nginx.pid;
error_log {dir}/nginx-error.log warn;
events {{ worker_connections 8192; }}
http {{
    access_log off;
    client_body_temp_path {dir}/client_body;
    proxy_temp_path {dir}/proxy;
    fastcgi_temp_path {dir}/fastcgi;
    uwsgi_temp_path {dir}/uwsgi;
    scgi_temp_path {dir}/scgi;
    server {{
        listen 127.0.0.1:{port} backlog=4096;
        location /v1/ {{
            proxy_pass http://127.0.0.1:{fake}/v1/;
            proxy_buffering off;
            proxy_http_version 1.1;
            proxy_set_header Connection "";
        }}
        location = /api/health {{
            default_type application/json;
            return 200 '{{"status":"ok"}}';
        }}
    }}
{extra}}}
"""


def start_nginx(processes, nginx, workdir, fake_port, extra=""):
    """nginx relaying the fake upstream on a free port; `extra` goes inside its `http` block (another
    server: bench/cluster.py's round-robin front). Returns (process, port, worker pid)."""
    nginx_dir = os.path.join(workdir, "nginx")
    os.makedirs(nginx_dir, exist_ok=True)
    os.chmod(workdir, 0o755)
    os.chmod(nginx_dir, 0o777)  # the worker may run as nobody
    for attempt in range(5):
        port = free_port()
        conf = os.path.join(nginx_dir, "nginx.conf")
        with open(conf, "w") as handle:
            handle.write(NGINX_CONF.format(dir=nginx_dir, port=port, fake=fake_port, extra=extra))
        log = os.path.join(nginx_dir, "stderr.log")
        process = processes.start("nginx", [nginx, "-p", nginx_dir, "-c", conf, "-e",
                                            os.path.join(nginx_dir, "nginx-error.log")],
                                  stdout=subprocess.DEVNULL, stderr=open(log, "wb"))
        end = time.monotonic() + START_TIMEOUT_S
        while time.monotonic() < end:
            if process.poll() is not None:
                break
            workers = children_of(process.pid)
            if workers and port_open(port):
                return process, port, workers[0]
            time.sleep(0.05)
        stop(process, signal.SIGQUIT)
        message = tail_of(log) + tail_of(os.path.join(nginx_dir, "nginx-error.log"))
        if "Address already in use" not in message:
            raise BenchError("nginx did not start:\n%s" % message)
    raise BenchError("nginx could not bind a free port")


def port_open(port):
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=0.5):
            return True
    except OSError:
        return False


# MARK: - HTTP client


class ChunkedDecoder:
    """Incremental HTTP/1.1 chunked transfer decoding."""

    def __init__(self):
        self.buffer = b""
        self.remaining = None  # data bytes left in the current chunk
        self.done = False

    def feed(self, data):
        self.buffer += data
        out = []
        while not self.done:
            if self.remaining is None:
                end = self.buffer.find(b"\r\n")
                if end < 0:
                    break
                size = int(self.buffer[:end].split(b";")[0], 16)
                self.buffer = self.buffer[end + 2:]
                if size == 0:
                    self.done = True
                    break
                self.remaining = size
            if self.remaining > 0:
                piece = self.buffer[:self.remaining]
                out.append(piece)
                self.buffer = self.buffer[len(piece):]
                self.remaining -= len(piece)
                if self.remaining > 0:
                    break
            if len(self.buffer) < 2:
                break
            self.buffer = self.buffer[2:]  # the CRLF after the data
            self.remaining = None
        return b"".join(out)


class SSEParser:
    """Incremental text/event-stream parsing into (event, data) pairs; comments are skipped."""

    def __init__(self):
        self.buffer = b""

    def feed(self, data):
        self.buffer += data.replace(b"\r\n", b"\n")
        events = []
        while True:
            end = self.buffer.find(b"\n\n")
            if end < 0:
                return events
            block, self.buffer = self.buffer[:end], self.buffer[end + 2:]
            name, data_lines = b"message", []
            for line in block.split(b"\n"):
                if line.startswith(b"data:"):
                    data_lines.append(line[6:] if line[5:6] == b" " else line[5:])
                elif line.startswith(b"event:"):
                    name = line[6:].strip()
            if data_lines:
                events.append((name.decode(), b"\n".join(data_lines)))


async def open_http(port, method, path, body=None):
    """Sends one request (Connection: close); returns (status, headers, reader, writer)."""
    reader, writer = await asyncio.wait_for(asyncio.open_connection("127.0.0.1", port), REQUEST_TIMEOUT_S)
    payload = json.dumps(body).encode() if body is not None else b""
    head = "%s %s HTTP/1.1\r\nHost: 127.0.0.1:%d\r\nConnection: close\r\n" % (method, path, port)
    if body is not None:
        head += "Content-Type: application/json\r\nContent-Length: %d\r\n" % len(payload)
    if path.endswith("/chat/completions") or "/stream" in path:
        head += "Accept: text/event-stream\r\n"
    writer.write(head.encode() + b"\r\n" + payload)
    raw = await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"), REQUEST_TIMEOUT_S)
    lines = raw.decode("latin-1").split("\r\n")
    status = int(lines[0].split(" ")[1])
    headers = {}
    for line in lines[1:]:
        if ":" in line:
            name, value = line.split(":", 1)
            headers[name.strip().lower()] = value.strip()
    return status, headers, reader, writer


async def request_json(port, method, path, body=None):
    status, headers, reader, writer = await open_http(port, method, path, body)
    try:
        data = b""
        if headers.get("transfer-encoding", "").lower() == "chunked":
            decoder = ChunkedDecoder()
            while not decoder.done:
                piece = await asyncio.wait_for(reader.read(65536), REQUEST_TIMEOUT_S)
                if not piece:
                    break
                data += decoder.feed(piece)
        elif "content-length" in headers:
            data = await asyncio.wait_for(reader.readexactly(int(headers["content-length"])), REQUEST_TIMEOUT_S)
        else:
            data = await asyncio.wait_for(reader.read(), REQUEST_TIMEOUT_S)
    finally:
        writer.close()
    if status >= 300:
        raise BenchError("%s %s answered %d: %s" % (method, path, status, data[:300].decode(errors="replace")))
    return json.loads(data) if data else None


class TokenClock:
    """Counts the fake upstream's `w<ns>` tokens a client receives and, if asked, their latencies."""

    def __init__(self, record):
        self.record = record
        self.pending = b""
        self.count = 0
        self.latencies_ns = []

    def feed(self, text, received_ns):
        self.pending += text
        cut = max(self.pending.rfind(b" "), self.pending.rfind(b"\n"))
        if cut < 0:
            return
        complete, self.pending = self.pending[:cut + 1], self.pending[cut + 1:]
        for match in TOKEN.finditer(complete):
            self.count += 1
            if self.record:
                self.latencies_ns.append(received_ns - int(match.group(1)))


async def read_events(reader, headers, on_events):
    """Feeds every SSE event of a response to on_events(events, received_ns) until it returns True."""
    decoder = ChunkedDecoder() if headers.get("transfer-encoding", "").lower() == "chunked" else None
    parser = SSEParser()
    while True:
        data = await asyncio.wait_for(reader.read(262144), STREAM_TIMEOUT_S)
        received = time.monotonic_ns()
        if not data:
            raise BenchError("the event stream ended before its last event")
        if decoder is not None:
            data = decoder.feed(data)
        events = parser.feed(data)
        if events and on_events(events, received):
            return


# MARK: - Streams


def directive(chunks, interval_ms, gate=None):
    text = "bench chunks=%d interval_ms=%g" % (chunks, interval_ms)
    return text + (" gate=%s" % gate if gate else "")


async def nginx_stream(port, chunks, interval_ms, record):
    """One chat completion read straight through nginx; returns its TokenClock."""
    body = {"model": "bench", "stream": True,
            "messages": [{"role": "user", "content": directive(chunks, interval_ms)}]}
    status, headers, reader, writer = await open_http(port, "POST", "/v1/chat/completions", body)
    clock = TokenClock(record)
    try:
        if status != 200:
            raise BenchError("nginx answered %d to the chat completion" % status)

        def on_events(events, received):
            for _, data in events:
                if data == b"[DONE]":
                    return True
                choices = json.loads(data).get("choices") or []
                for choice in choices:
                    content = (choice.get("delta") or {}).get("content")
                    if content:
                        clock.feed(content.encode(), received)
            return False

        await read_events(reader, headers, on_events)
    finally:
        writer.close()
    return clock


async def parley_subscribe(port, message_id, mode, ready, record):
    """Reads one message's event stream to `done`; sets `ready` at the snapshot. Returns (clock, frames)."""
    path = "/api/messages/%s/stream" % message_id + ("?mode=text" if mode == "text" else "")
    status, headers, reader, writer = await open_http(port, "GET", path)
    clock, frames = TokenClock(record), [0]
    try:
        if status != 200:
            raise BenchError("GET %s answered %d" % (path, status))

        def on_events(events, received):
            for name, data in events:
                frames[0] += 1
                if name == "snapshot":
                    ready.set()
                elif name == "delta":
                    clock.feed(json.loads(data)["text"].encode(), received)
                elif name == "error":
                    raise BenchError("parley reported a failed reply: %s" % data.decode(errors="replace"))
                elif name == "done":
                    return True
            return False

        await read_events(reader, headers, on_events)
    finally:
        ready.set()
        writer.close()
    return clock, frames[0]


async def parley_generation(port, fake_port, chunks, interval_ms, subscribers, mode, record):
    """One generation with `subscribers` streams attached before the upstream sends its first chunk."""
    conversation = await request_json(port, "POST", "/api/conversations", {"title": "bench"})
    gate = uuid.uuid4().hex
    created = await request_json(port, "POST", "/api/conversations/%s/messages" % conversation["id"],
                                 {"content": directive(chunks, interval_ms, gate), "model": "openai:bench"})
    message_id = created["assistant_message"]["id"]
    readies = [asyncio.Event() for _ in range(subscribers)]
    tasks = [asyncio.ensure_future(parley_subscribe(port, message_id, mode, ready, record)) for ready in readies]
    try:
        await asyncio.wait_for(asyncio.gather(*(ready.wait() for ready in readies)), REQUEST_TIMEOUT_S)
        await request_json(fake_port, "POST", "/bench/release/%s" % gate)
        return await asyncio.gather(*tasks)
    finally:
        for task in tasks:
            task.cancel()


# MARK: - Measurements


def percentile(values, fraction):
    ordered = sorted(values)
    return ordered[max(0, math.ceil(fraction * len(ordered)) - 1)]


async def measure_latency(target, env, chunks, interval_ms):
    """(median ms, p99 ms) of one paced stream."""
    if target == "nginx":
        clock = await nginx_stream(env["nginx_port"], chunks, interval_ms, True)
    else:
        (clock, _), = await parley_generation(env[target + "_port"], env["fake_port"], chunks, interval_ms,
                                               1, "text", True)
    check_count(target, clock.count, chunks)
    latencies = [ns / 1e6 for ns in clock.latencies_ns]
    return statistics.median(latencies), percentile(latencies, 0.99)


def check_count(target, received, expected):
    if received != expected:
        raise BenchError("%s delivered %d upstream chunks, expected %d" % (target, received, expected))


async def measure_cpu(target, env, concurrency, rounds, chunks, mode="text", subscribers=1):
    """CPU ms per 1,000 delivered upstream events (schedstat, ticks) and the median SSE frames a
    subscriber received per generation."""
    pid = env["nginx_worker"] if target == "nginx" else env[target + "_pid"]
    await asyncio.sleep(SETTLE_S)
    meter = CPUMeter(pid)
    meter.start()
    delivered, frames = 0, []
    for _ in range(rounds):
        if target == "nginx":
            clocks = await asyncio.gather(*(nginx_stream(env["nginx_port"], chunks, 0, False)
                                            for _ in range(concurrency)))
            for clock in clocks:
                check_count(target, clock.count, chunks)
                delivered += clock.count
        else:
            generations = await asyncio.gather(*(
                parley_generation(env[target + "_port"], env["fake_port"], chunks, 0, subscribers, mode, False)
                for _ in range(concurrency)))
            for results in generations:
                for clock, frame_count in results:
                    frames.append(frame_count)
                    if mode == "text":
                        check_count(target, clock.count, chunks)
                    delivered += chunks
    await asyncio.sleep(SETTLE_S)
    precise_ms, ticks_ms = meter.stop()
    thousands = delivered / 1000.0
    return precise_ms / thousands, ticks_ms / thousands, (statistics.median(frames) if frames else None)


def run_wrk(wrk, port, seconds):
    """Requests per second of `wrk -t2 -c50` against /api/health."""
    result = subprocess.run([wrk, "-t2", "-c50", "-d%ds" % seconds, "http://127.0.0.1:%d/api/health" % port],
                            capture_output=True, text=True, timeout=seconds + 30)
    match = re.search(r"Requests/sec:\s+([\d.]+)", result.stdout)
    if result.returncode != 0 or not match:
        raise BenchError("wrk failed: %s%s" % (result.stdout[-500:], result.stderr[-500:]))
    if "Non-2xx" in result.stdout or "Socket errors" in result.stdout:
        errors = [l.strip() for l in result.stdout.splitlines() if "Non-2xx" in l or "Socket errors" in l]
        print("  wrk on port %d: %s" % (port, "; ".join(errors)), file=sys.stderr)
    return float(match.group(1))


# MARK: - Report


def fmt(value, digits=1):
    if value is None:
        return "–"
    if abs(value) >= 1000:
        return "{:,.0f}".format(value)
    return ("%%.%df" % digits) % value


def ratio(a, b):
    return "–" if not a or not b else "%.2f×" % (a / b)


def spread(values, digits=1):
    """median (min–max) of the repetitions."""
    if not values:
        return "–"
    return "%s (%s–%s)" % (fmt(statistics.median(values), digits), fmt(min(values), digits),
                           fmt(max(values), digits))


def median(values):
    return statistics.median(values) if values else None


# MARK: - Main


async def run(args, env, log, results):
    """Every figure, stored into `results` as it is measured (a bench stopped early reports what it has)."""
    targets = ["parley0", "parley25", "nginx"]
    phase_start = [time.monotonic()]

    def phase(text, shown=True):
        if not shown:
            return
        now = time.monotonic()
        log("%s  [previous phase %.0f s]" % (text, now - phase_start[0]))
        phase_start[0] = now

    results["loadavg_start"] = os.getloadavg()
    if "startup" in args.only:
        phase("startup: %d times a start on a fresh database and one on it again, default settings" % args.startup_reps)
        results["startup"] = []
        for rep in range(args.startup_reps):
            figure = await asyncio.to_thread(measure_startup, args.parley_bin, env)
            results["startup"].append(figure)
            log("  rep %d: listening after %.3f s (CPU %.2f s) on a fresh database, %.3f s (CPU %.2f s) on it again; "
                "RSS 1 s later %.1f / %.1f MiB (anonymous %.1f, file-backed %.1f; %d shared libraries)" % (
                    rep + 1, figure["fresh_s"], figure["fresh_cpu_s"], figure["restart_s"], figure["restart_cpu_s"],
                    figure["fresh_rss_kib"] / 1024.0, figure["restart_rss_kib"] / 1024.0,
                    figure["restart_anon_kib"] / 1024.0, figure["restart_file_kib"] / 1024.0, figure["libraries"]))
    phase("relay latency: one stream, %d chunks every %g ms, %d reps" % (args.latency_chunks,
                                                                       args.latency_interval_ms, args.reps),
          "latency" in args.only)
    for rep in range(args.reps if "latency" in args.only else 0):
        for target in targets:
            med, p99 = await measure_latency(target, env, args.latency_chunks, args.latency_interval_ms)
            results.setdefault(("lat_med", target), []).append(med)
            results.setdefault(("lat_p99", target), []).append(p99)
        log("  rep %d: median ms %s" % (rep + 1, ", ".join("%s %.2f" % (t, results[("lat_med", t)][-1])
                                                          for t in targets)))

    cpu_targets = [("parley25", "text"), ("parley0", "text"), ("parley25", "html"), ("nginx", "text")]
    for concurrency in args.concurrency if "cpu" in args.only else []:
        rounds = max(1, args.single_rounds if concurrency == 1 else 1)
        reps = args.reps if concurrency == 1 else min(args.reps, args.concurrent_reps)
        phase("CPU: %d concurrent unpaced streams x %d chunks, %d round(s), %d reps"
            % (concurrency, args.load_chunks, rounds, reps))
        for rep in range(reps):
            for target, mode in cpu_targets:
                per_k, per_k_ticks, frames = await measure_cpu(target, env, concurrency, rounds,
                                                               args.load_chunks, mode)
                results.setdefault(("cpu", concurrency, target, mode), []).append(per_k)
                results.setdefault(("ticks", concurrency, target, mode), []).append(per_k_ticks)
                if frames is not None:
                    results.setdefault(("frames", concurrency, target, mode), []).append(frames)
            log("  rep %d: CPU ms/1k events %s" % (rep + 1, ", ".join(
                "%s/%s %.2f" % (t, m, results[("cpu", concurrency, t, m)][-1]) for t, m in cpu_targets)))

    phase("fan-out: one generation, %d subscribers, %d chunks, %d reps" % (args.fanout, args.load_chunks,
                                                                         args.fanout_reps), "fanout" in args.only)
    for rep in range(args.fanout_reps if "fanout" in args.only else 0):
        for target in ["parley25", "parley0"]:
            per_k, per_k_ticks, frames = await measure_cpu(target, env, 1, 1, args.load_chunks, "text",
                                                           args.fanout)
            results.setdefault(("fan", target), []).append(per_k)
            results.setdefault(("fanticks", target), []).append(per_k_ticks)
            results.setdefault(("fanframes", target), []).append(frames)
        log("  rep %d: CPU ms/1k delivered %s" % (rep + 1, ", ".join(
            "%s %.3f" % (t, results[("fan", t)][-1]) for t in ["parley25", "parley0"])))

    phase("wrk -t2 -c50 -d%ds /api/health, %d reps" % (args.wrk_seconds, args.wrk_reps), "wrk" in args.only)
    for rep in range(args.wrk_reps if "wrk" in args.only else 0):
        for target in ["parley25", "nginx"]:
            rps = await asyncio.to_thread(run_wrk, env["wrk"], env[target + "_port"], args.wrk_seconds)
            results.setdefault(("rps", target), []).append(rps)
        log("  rep %d: req/s parley %.0f, nginx %.0f" % (rep + 1, results[("rps", "parley25")][-1],
                                                         results[("rps", "nginx")][-1]))
    if not args.no_scale and {"setup", "scale", "idle"} & args.only:
        await scale.run(args, env, log, phase, perf_recorder(args, log), results.setdefault("scale", {}))
    results["loadavg_end"] = os.getloadavg()
    phase("measurements done")
    return results


def report(args, env, results):
    r = results
    lines = []
    add = lines.append
    add("# Parley relay bench")
    add("")
    add("%s, %s, %d cores, Python %s, %s; parley commit %s. Medians of %d repetitions (fan-out: %d; wrk: %d), targets "
        "interleaved within each repetition; cells with a range show median (min–max). Load average (1 / 5 / "
        "15 min) %s at the start, %s at the end: other work on the machine shares its cores."
        % (time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()), platform.platform(terse=True), os.cpu_count(),
           platform.python_version(), env["nginx_version"], env["commit"], args.reps, args.fanout_reps, args.wrk_reps,
           " / ".join("%.1f" % v for v in r["loadavg_start"]), " / ".join("%.1f" % v for v in r["loadavg_end"])))
    add("")
    if ("lat_med", "parley0") in r:
        relay_sections(args, r, add)
    if "scale" in r:
        scale.report(args, env, r["scale"], add)
    r["loadavg"] = "%.1f at the start, %.1f at the end" % (r["loadavg_start"][0], r["loadavg_end"][0])
    goals.report(args, r, add)
    add("Bench settings for Parley: PARLEY_MAX_GENERATIONS=1000, PARLEY_MAX_GENERATIONS_PER_USER=1000, "
        "PARLEY_USER_MESSAGES_PER_MINUTE=100000, PARLEY_MAX_CONNECTIONS=12000, PARLEY_MAX_CONNECTIONS_PER_IP="
        "12000, PARLEY_MAX_STREAMS_PER_USER=12000, PARLEY_LISTEN_BACKLOG=4096, PARLEY_UPSTREAM_IDLE_TIMEOUT=300 (the bench runs up to %d "
        "generations at once as one user and holds %d event streams from 127.0.0.1); everything else "
        "default. The fake upstream is Python (%s) in its own process; client and upstream share the "
        "machine's 2 cores with the server, so latency includes their scheduling noise equally for every "
        "target." % (max(args.concurrency + args.scale_streams), args.idle_streams, env.get("loop", "asyncio")))
    return "\n".join(lines) + "\n"


def relay_sections(args, r, add):
    """The relay figures above the scale ones: one stream's latency, CPU per event, fan-out, wrk."""
    m = lambda *key: median(r.get(key, []))
    if ("lat_med", "parley0") in r:
        add("## Relay latency, one stream")
        add("")
        add("%d chunks, one every %g ms; latency = client receive time − upstream send time (CLOCK_MONOTONIC), "
            "Parley in `?mode=text`." % (args.latency_chunks, args.latency_interval_ms))
        add("")
        add("| | Parley frame 0 ms | Parley frame 25 ms (default) | nginx | Parley 0 / nginx | Parley 25 / nginx |")
        add("|---|---|---|---|---|---|")
        for key, label in (("lat_med", "median latency, ms"), ("lat_p99", "p99 latency, ms")):
            add("| %s | %s | %s | %s | %s | %s |" % (
                label, spread(r[(key, "parley0")], 2), spread(r[(key, "parley25")], 2), spread(r[(key, "nginx")], 2),
                ratio(m(key, "parley0"), m(key, "nginx")), ratio(m(key, "parley25"), m(key, "nginx"))))
        add("")
        if args.latency_interval_ms < 25:
            add("Chunks every %g ms arrive faster than the default 25 ms frame interval, so with it Parley sends "
                "them together by design (docs/api.md): frame 25 shows that batching delay, frame 0 the relay "
                "itself." % args.latency_interval_ms)
            add("")
    if ("cpu", args.concurrency[0], "parley25", "text") in r:
        add("## Server CPU per 1,000 relayed upstream events")
        add("")
        add("Unpaced streams of %d chunks, each stream its own generation. CPU of the Parley process (all "
            "threads) or the nginx worker over the whole run, including creating the conversation and message: "
            "the sum of /proc/PID/task/*/schedstat (ns); the utime+stime cross-check (/proc/PID/stat, %d ms "
            "ticks) is below. Parley text = `?mode=text` (deltas); html = the page's mode (Markdown blocks and "
            "tail). K=1 runs %d generations one after another; K>1 runs once per repetition, %d repetitions."
            % (args.load_chunks, 1000 // CLK_TCK, args.single_rounds, min(args.reps, args.concurrent_reps)))
        add("")
        add("| concurrent streams | Parley text, frame 25 | Parley text, frame 0 | Parley html, frame 25 | nginx "
            "| Parley text 25 / nginx | Parley text 0 / nginx | Parley html / nginx |")
        add("|---|---|---|---|---|---|---|---|")
        for k in args.concurrency:
            p25, p0, ph, ng = (m("cpu", k, "parley25", "text"), m("cpu", k, "parley0", "text"),
                               m("cpu", k, "parley25", "html"), m("cpu", k, "nginx", "text"))
            add("| %d | %s | %s | %s | %s | %s | %s | %s |" % (
                k, spread(r[("cpu", k, "parley25", "text")], 2), spread(r[("cpu", k, "parley0", "text")], 2),
                spread(r[("cpu", k, "parley25", "html")], 2), spread(r[("cpu", k, "nginx", "text")], 2),
                ratio(p25, ng), ratio(p0, ng), ratio(ph, ng)))
        add("")
        add("utime+stime cross-check, median ms per 1,000 events (text 25 / text 0 / html 25 / nginx): %s."
            % "; ".join("K=%d: %s / %s / %s / %s" % (
                k, fmt(m("ticks", k, "parley25", "text"), 2), fmt(m("ticks", k, "parley0", "text"), 2),
                fmt(m("ticks", k, "parley25", "html"), 2), fmt(m("ticks", k, "nginx", "text"), 2))
                for k in args.concurrency))
        add("")
        add("SSE frames a Parley subscriber received per generation of %d chunks (median): %s."
            % (args.load_chunks, "; ".join("K=%d text/25 %s, text/0 %s, html/25 %s" % (
                k, fmt(m("frames", k, "parley25", "text"), 0), fmt(m("frames", k, "parley0", "text"), 0),
                fmt(m("frames", k, "parley25", "html"), 0)) for k in args.concurrency)))
        add("")
    if ("fan", "parley25") in r:
        add("## Fan-out: one generation, %d subscribers" % args.fanout)
        add("")
        add("%d unpaced chunks, every subscriber in `?mode=text`; delivered events = chunks × subscribers."
            % args.load_chunks)
        add("")
        add("| | Parley frame 25 | Parley frame 0 |")
        add("|---|---|---|")
        add("| CPU ms per 1,000 delivered events | %s | %s |" % (spread(r[("fan", "parley25")], 3),
                                                                spread(r[("fan", "parley0")], 3)))
        add("| same, utime+stime cross-check | %s | %s |" % (fmt(m("fanticks", "parley25"), 3),
                                                            fmt(m("fanticks", "parley0"), 3)))
        add("| SSE frames per subscriber (median) | %s | %s |" % (fmt(m("fanframes", "parley25"), 0),
                                                                  fmt(m("fanframes", "parley0"), 0)))
        add("")
    if ("rps", "parley25") in r:
        add("## Small JSON GETs")
        add("")
        add("`wrk -t2 -c50 -d%ds`: Parley `GET /api/health` vs nginx `return 200 '{\"status\":\"ok\"}'` "
            "(one worker process). wrk shares the 2 cores with the server." % args.wrk_seconds)
        add("")
        add("| | Parley | nginx | Parley / nginx |")
        add("|---|---|---|---|")
        add("| requests/s | %s | %s | %s |" % (spread(r[("rps", "parley25")], 0), spread(r[("rps", "nginx")], 0),
                                              ratio(m("rps", "parley25"), m("rps", "nginx"))))
        add("")


def parse_args():
    parser = argparse.ArgumentParser(description="Parley relay bench (see bench/README.md)")
    parser.add_argument("--parley-bin", default=os.environ.get("PARLEY_BIN") or
                        os.path.join(REPO, ".build", "release", "parley"))
    parser.add_argument("--reps", type=int, default=5)
    parser.add_argument("--latency-chunks", type=int, default=100)
    parser.add_argument("--latency-interval-ms", type=float, default=20)
    parser.add_argument("--load-chunks", type=int, default=2000)
    parser.add_argument("--concurrency", default="1,50", help="comma-separated concurrent stream counts")
    parser.add_argument("--single-rounds", type=int, default=2,
                        help="generations one after another when the concurrency is 1")
    parser.add_argument("--concurrent-reps", type=int, default=2,
                        help="repetitions of the K>1 CPU runs (each is 4 x K x load-chunks events)")
    parser.add_argument("--fanout", type=int, default=100)
    parser.add_argument("--fanout-reps", type=int, default=3)
    parser.add_argument("--wrk-seconds", type=int, default=5)
    parser.add_argument("--wrk-reps", type=int, default=2)
    parser.add_argument("--scale-streams", default="1,100,500,1000",
                        help="issue 10: concurrent streams of the start/relay runs, started over 1 s")
    parser.add_argument("--scale-chunks", type=int, default=200)
    parser.add_argument("--scale-interval-ms", type=float, default=20)
    parser.add_argument("--setup-streams", type=int, default=200, help="one-chunk streams for setup CPU")
    parser.add_argument("--idle-streams", type=int, default=10000, help="0 skips the idle case")
    parser.add_argument("--idle-active", type=int, default=10)
    parser.add_argument("--idle-quiet-s", type=float, default=16, help="idle CPU window (one heartbeat is 15 s)")
    parser.add_argument("--idle-target", default="parley0", choices=["parley0", "parley25"])
    parser.add_argument("--no-scale", action="store_true", help="only the relay figures above issue 10's")
    parser.add_argument("--storm-streams", type=int, default=500,
                        help="issue 23: the start storm's size; runs of up to this many streams are repeated "
                             "--storm-reps times, and at it titles off and the one-request start are run too")
    parser.add_argument("--storm-reps", type=int, default=3, help="repetitions of runs up to --storm-streams")
    parser.add_argument("--big-reps", type=int, default=1, help="repetitions of runs past --storm-streams")
    parser.add_argument("--setup-reps", type=int, default=3, help="repetitions of the setup CPU runs")
    parser.add_argument("--startup-reps", type=int, default=3, help="starts timed to `listening on`")
    parser.add_argument("--variants", default="",
                        help="comma-separated scale variants to run instead of the default set: " +
                             ", ".join(scale.VARIANTS))
    parser.add_argument("--only", default=",".join(PHASES),
                        help="comma-separated phases to run (default all): " + ", ".join(PHASES))
    parser.add_argument("--perf-dir", default="",
                        help="record `perf record -e cpu-clock --call-graph dwarf` of the Parley server over "
                             "each scale run into this folder (perf slows the server: time figures apart)")
    parser.add_argument("--perf-freq", type=int, default=250, help="perf samples per second per CPU")
    parser.add_argument("--perf-stack", type=int, default=16384, help="bytes of stack perf copies per sample")
    parser.add_argument("--markdown-results", default=os.path.join(HERE, "markdown-results.md"))
    parser.add_argument("--timeout-s", type=float, default=0,
                        help="seconds a request or a stream read may take before the stream counts as an error "
                             "(default %g and %g; raise it on a machine so busy that streams time out)"
                             % (REQUEST_TIMEOUT_S, STREAM_TIMEOUT_S))
    parser.add_argument("--time-limit", type=float, default=870, help="seconds before the bench gives up")
    parser.add_argument("--out", default=os.path.join(HERE, "results.md"))
    parser.add_argument("--quick", action="store_true", help="2 repetitions, smaller runs (a smoke test)")
    args = parser.parse_args()
    args.concurrency = [int(c) for c in args.concurrency.split(",") if c.strip()]
    args.scale_streams = [int(c) for c in args.scale_streams.split(",") if c.strip()]
    args.variants = [v.strip() for v in args.variants.split(",") if v.strip()]
    args.only = {p.strip() for p in args.only.split(",") if p.strip()}
    unknown = [v for v in args.variants if v not in scale.VARIANTS] + [p for p in args.only if p not in PHASES]
    if unknown:
        parser.error("unknown variant or phase: %s" % ", ".join(unknown))
    if args.quick:
        args.reps, args.latency_chunks, args.wrk_reps, args.wrk_seconds, args.fanout_reps = 2, 60, 1, 2, 2
        args.load_chunks, args.single_rounds = 500, 1
        args.concurrency, args.fanout = [1, 10], 20
        args.scale_streams, args.scale_chunks, args.setup_streams = [1, 50], 50, 50
        args.storm_streams, args.storm_reps, args.setup_reps, args.startup_reps = 50, 2, 1, 2
        args.idle_streams, args.idle_quiet_s = 500, 3
    return args


def binary_commit(binary):
    """The commit of the checkout a `.build/<config>/parley` binary was built in, marked `+dirty` when that
    checkout has uncommitted changes and `(binary older than HEAD)` when it predates the last commit that
    changed Sources/ or Package.swift."""
    path = os.path.abspath(binary)
    root = os.path.dirname(path)
    while os.path.basename(root) != ".build":
        if os.path.dirname(root) == root:
            return "unknown (%s)" % binary
        root = os.path.dirname(root)
    root = os.path.dirname(root)
    try:
        run = lambda *a: subprocess.run(["git", "-C", root] + list(a), capture_output=True, text=True,
                                        timeout=5).stdout.strip()
        commit = run("rev-parse", "--short", "HEAD")
        if not commit:
            return "unknown (%s)" % binary
        if run("status", "--porcelain", "--untracked-files=no", "--", "Sources", "Package.swift"):
            commit += "+dirty"
        if os.path.getmtime(path) < int(run("log", "-1", "--format=%ct", "--", "Sources", "Package.swift") or 0):
            commit += " (binary older than HEAD)"
        return commit
    except (OSError, subprocess.SubprocessError, ValueError):
        return "unknown (%s)" % binary


def main():
    args = parse_args()
    if args.timeout_s > 0:
        global REQUEST_TIMEOUT_S, STREAM_TIMEOUT_S
        REQUEST_TIMEOUT_S = STREAM_TIMEOUT_S = args.timeout_s
    log = lambda text: print(text, file=sys.stderr, flush=True)
    nginx, wrk = shutil.which("nginx") or ("/usr/sbin/nginx" if os.access("/usr/sbin/nginx", os.X_OK) else None), \
        shutil.which("wrk")
    missing = [name for name, path in (("nginx (Debian package nginx-light)", nginx), ("wrk", wrk)) if not path]
    if missing:
        print("bench: missing %s; install with `apt-get install -y nginx-light wrk` (or `make bench-deps`)"
              % " and ".join(missing), file=sys.stderr)
        return 2
    if not os.access(args.parley_bin, os.X_OK):
        print("bench: no parley binary at %s; run `swift build -c release` or set PARLEY_BIN"
              % args.parley_bin, file=sys.stderr)
        return 2
    if not os.path.exists("/proc/self/stat"):
        print("bench: needs Linux /proc to read CPU times", file=sys.stderr)
        return 2

    def on_signal(number, _frame):
        raise KeyboardInterrupt("signal %d" % number)

    try:  # 10,000 idle streams and 1,000 relayed ones need more than the usual 1,024 descriptors
        _, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
        resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
    except (ValueError, OSError):
        pass
    try:
        import uvloop
        uvloop.install()
        loop_name = "uvloop %s" % uvloop.__version__
    except ImportError:
        loop_name = "asyncio"
        log("bench: uvloop is not installed (make bench makes a venv with it): plain asyncio, a slower client")
    signal.signal(signal.SIGTERM, on_signal)
    signal.signal(signal.SIGALRM, on_signal)
    signal.alarm(int(args.time_limit))
    processes = Processes()
    workdir = tempfile.mkdtemp(prefix="parley-bench-")
    started = time.monotonic()
    results, env = {}, None
    try:
        fake, fake_port = start_fake(processes, workdir)
        env = {"fake_port": fake_port, "fake_pid": fake.pid, "loop": loop_name, "wrk": wrk, "commit": binary_commit(args.parley_bin)}
        for name, frame_ms in (("parley0", 0), ("parley25", 25)):
            process, port = start_parley(processes, args.parley_bin, workdir, fake_port, frame_ms, name)
            env[name + "_pid"], env[name + "_port"] = process.pid, port
        _, env["nginx_port"], env["nginx_worker"] = start_nginx(processes, nginx, workdir, fake_port)
        version = subprocess.run([nginx, "-v"], capture_output=True, text=True).stderr.strip()
        env["nginx_version"] = version.replace("nginx version: ", "")
        log("bench: fake upstream :%d, parley (frame 0) :%d, parley (frame 25) :%d, nginx :%d, in %s"
            % (fake_port, env["parley0_port"], env["parley25_port"], env["nginx_port"], workdir))
        asyncio.run(run(args, env, log, results))
        text = report(args, env, results)
        print(text)
        with open(args.out, "w") as handle:
            handle.write(text)
        log("bench: done in %.0f s; written to %s" % (time.monotonic() - started, args.out))
        return 0
    except BenchError as error:
        print("bench: %s" % error, file=sys.stderr)
        return 1
    except KeyboardInterrupt as interrupt:
        print("bench: stopped (%s) after %.0f s" % (interrupt or "interrupted", time.monotonic() - started),
              file=sys.stderr)
        if results and env:
            signal.alarm(0)
            results.setdefault("loadavg_end", os.getloadavg())
            text = report(args, env, results)
            text = text.replace("\n", "\n\n**Stopped after %.0f s (%s): the figures measured until then.**\n"
                                % (time.monotonic() - started, interrupt or "interrupted"), 1)
            print(text)
            with open(args.out, "w") as handle:
                handle.write(text)
        return 1
    finally:
        signal.alarm(0)
        processes.stop_all()
        shutil.rmtree(workdir, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
