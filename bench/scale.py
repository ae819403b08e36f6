"""Issue 10 ("Scale on one machine") figures for the Parley bench; imported by bench.py.

Every run drives Parley's real path per stream: POST /api/conversations, POST .../messages
(`Content-Type: application/json`), GET /api/messages/{id}/stream?mode=text; nginx gets one
`POST /v1/chat/completions` per stream through `proxy_pass` to the same fake upstream. Streams are
`--scale-chunks` (200) chunks `--scale-interval-ms` (20) ms apart, their starts spread evenly over 1 s.

- starts: POST message latency, first text after the POST and after the upstream's first byte (the
  first chunk's embedded send time), p50/p99; nginx: first byte of its response after the request.
- relay: latency of every chunk (client receive − upstream send), p50/p99, at 1/100/500/1,000
  streams, Parley frame 0 and 25 against nginx; server CPU per 1,000 chunks counted from the moment
  every stream has shown its first text to the end (setup excluded).
- setup CPU per new stream: streams of one chunk, the server's CPU over the run / streams.
- idle: 10,000 event streams held open on one gated live reply; RSS per stream, CPU while they only
  get heartbeats, then one live reply to 10 other streams while the 10,000 wait: per-frame p99.
- the client's own CPU (this process) and the fake upstream's over every run; a run where either
  used more than CLIENT_BOTTLENECK of a core is marked: there the figure measures the client too.
"""

import asyncio
import json
import os
import resource
import time
import uuid

import bench as b

CLIENT_BOTTLENECK = 0.85  # share of one core past which the load client (or upstream) may limit a run
CONNECT_PARALLEL = 200    # connections being opened at once in the idle case


def pct(values, fraction):
    return b.percentile(values, fraction) if values else None


def machine_busy():
    """(busy, total) jiffies of all cores from /proc/stat."""
    with open("/proc/stat") as handle:
        fields = [int(v) for v in handle.readline().split()[1:]]
    idle = fields[3] + (fields[4] if len(fields) > 4 else 0)
    return sum(fields) - idle, sum(fields)


def client_cpu_s():
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


class Stream:
    """What one stream of a run measured."""

    def __init__(self):
        self.post_ms = None         # POST message (Parley) / first response byte (nginx), ms
        self.first_after_post_ms = None
        self.first_after_upstream_ms = None
        self.latencies_ms = []      # every chunk: receive − upstream send
        self.receive_ns = []        # receive time of every chunk
        self.chunks = 0
        self.error = None


def tokens(text):
    return [int(m.group(1)) for m in b.TOKEN.finditer(text)]


async def parley_stream(port, chunks, interval_ms, stream, first_text, extra=""):
    """Conversation, message, event stream to `done` (text mode), filling `stream`."""
    conversation = await b.request_json(port, "POST", "/api/conversations", {"title": "scale"})
    posted = time.monotonic_ns()
    created = await b.request_json(port, "POST", "/api/conversations/%s/messages" % conversation["id"],
                                   {"content": b.directive(chunks, interval_ms) + extra, "model": "openai:bench"})
    stream.post_ms = (time.monotonic_ns() - posted) / 1e6
    path = "/api/messages/%s/stream?mode=text" % created["assistant_message"]["id"]
    status, headers, reader, writer = await b.open_http(port, "GET", path)
    pending = [b""]
    try:
        if status != 200:
            raise b.BenchError("GET %s answered %d" % (path, status))

        def on_text(text, received):
            pending[0] += text
            cut = max(pending[0].rfind(b" "), pending[0].rfind(b"\n"))
            if cut < 0:
                return
            complete, pending[0] = pending[0][:cut + 1], pending[0][cut + 1:]
            for sent in tokens(complete):
                if stream.chunks == 0:
                    stream.first_after_post_ms = (received - posted) / 1e6
                    stream.first_after_upstream_ms = (received - sent) / 1e6
                    first_text()
                stream.chunks += 1
                stream.latencies_ms.append((received - sent) / 1e6)
                stream.receive_ns.append(received)

        def on_events(events, received):
            for name, data in events:
                if name == "snapshot":
                    on_text(json.loads(data).get("content", "").encode(), received)
                elif name == "delta":
                    on_text(json.loads(data)["text"].encode(), received)
                elif name == "error":
                    raise b.BenchError("parley reported a failed reply: %s" % data.decode(errors="replace"))
                elif name == "done":
                    return True
            return False

        await b.read_events(reader, headers, on_events)
    finally:
        writer.close()


async def nginx_stream(port, chunks, interval_ms, stream, first_text):
    body = {"model": "bench", "stream": True,
            "messages": [{"role": "user", "content": b.directive(chunks, interval_ms)}]}
    posted = time.monotonic_ns()
    status, headers, reader, writer = await b.open_http(port, "POST", "/v1/chat/completions", body)
    stream.post_ms = (time.monotonic_ns() - posted) / 1e6  # first byte: the response head
    try:
        if status != 200:
            raise b.BenchError("nginx answered %d" % status)

        def on_events(events, received):
            for _, data in events:
                if data == b"[DONE]":
                    return True
                for choice in json.loads(data).get("choices") or []:
                    content = (choice.get("delta") or {}).get("content")
                    for sent in tokens((content or "").encode()):
                        if stream.chunks == 0:
                            stream.first_after_post_ms = (received - posted) / 1e6
                            stream.first_after_upstream_ms = (received - sent) / 1e6
                            first_text()
                        stream.chunks += 1
                        stream.latencies_ms.append((received - sent) / 1e6)
                        stream.receive_ns.append(received)
            return False

        await b.read_events(reader, headers, on_events)
    finally:
        writer.close()


async def scaled_run(target, env, count, chunks, interval_ms, spread_s=1.0):
    """`count` streams started evenly over `spread_s`; returns a dict of figures."""
    port = env[target + "_port"]
    pid = env["nginx_worker"] if target == "nginx" else env[target + "_pid"]
    await asyncio.sleep(b.SETTLE_S)
    server, upstream = b.CPUMeter(pid), b.CPUMeter(env["fake_pid"])
    relay_server = b.CPUMeter(pid)
    server.start()
    upstream.start()
    client0, wall0, machine0 = client_cpu_s(), time.monotonic(), machine_busy()
    all_started = asyncio.Event()
    started, relay_from = [0], [None]

    def first_text():
        started[0] += 1
        if started[0] == count:
            relay_server.start()
            relay_from[0] = time.monotonic_ns()
            all_started.set()

    streams = [Stream() for _ in range(count)]

    async def one(index, stream):
        await asyncio.sleep(spread_s * index / count)
        try:
            if target == "nginx":
                await nginx_stream(port, chunks, interval_ms, stream, first_text)
            else:
                await parley_stream(port, chunks, interval_ms, stream, first_text)
        except (b.BenchError, OSError, asyncio.TimeoutError, ValueError) as error:
            stream.error = "%s: %s" % (type(error).__name__, error)

    await asyncio.gather(*(one(i, s) for i, s in enumerate(streams)))
    await asyncio.sleep(b.SETTLE_S)
    server_ms, _ = server.stop()
    upstream_ms, _ = upstream.stop()
    wall = time.monotonic() - wall0
    machine1 = machine_busy()
    client_ms = (client_cpu_s() - client0) * 1000
    relay_ms = relay_server.stop()[0] if relay_from[0] else None
    errors = [s.error for s in streams if s.error]
    short = sum(1 for s in streams if not s.error and s.chunks != chunks)
    latencies = [v for s in streams for v in s.latencies_ms]
    relayed_after = sum(1 for s in streams for t in s.receive_ns if relay_from[0] and t >= relay_from[0])
    received = sum(s.chunks for s in streams)
    ok = [s for s in streams if not s.error]
    return {
        "streams": count, "errors": len(errors), "first_error": errors[0] if errors else None, "short": short,
        "post_p50": pct([s.post_ms for s in ok if s.post_ms is not None], 0.5),
        "post_p99": pct([s.post_ms for s in ok if s.post_ms is not None], 0.99),
        "first_post_p50": pct([s.first_after_post_ms for s in ok if s.chunks], 0.5),
        "first_post_p99": pct([s.first_after_post_ms for s in ok if s.chunks], 0.99),
        "first_up_p50": pct([s.first_after_upstream_ms for s in ok if s.chunks], 0.5),
        "first_up_p99": pct([s.first_after_upstream_ms for s in ok if s.chunks], 0.99),
        "lat_p50": pct(latencies, 0.5), "lat_p99": pct(latencies, 0.99),
        "cpu_per_k": (relay_ms / (relayed_after / 1000.0)) if relay_ms and relayed_after else None,
        "server_cpu_ms": server_ms, "wall_s": wall,
        "client_core": client_ms / 1000.0 / wall, "upstream_core": upstream_ms / 1000.0 / wall,
        "machine_busy": (machine1[0] - machine0[0]) / max(1, machine1[1] - machine0[1]),
        "window_share": relayed_after / received if received else None, "received": received,
    }


async def setup_cpu(target, env, count):
    """Server CPU ms per new stream: `count` one-chunk streams started over 1 s."""
    result = await scaled_run(target, env, count, 1, 0)
    result["setup_ms"] = result["server_cpu_ms"] / count
    return result


# MARK: - Idle streams


def rss_kib(pid):
    with open("/proc/%d/status" % pid) as handle:
        for line in handle:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    return 0


async def idle_stream(port, message_id, opened, stop):
    """Holds one event stream open (snapshot read, then heartbeats) until `stop`."""
    status, headers, reader, writer = await b.open_http(port, "GET", "/api/messages/%s/stream?mode=text" % message_id)
    try:
        if status != 200:
            raise b.BenchError("idle stream answered %d" % status)
        opened()
        while not stop.is_set():
            data = await reader.read(4096)
            if not data:
                return "closed"
        return "ok"
    finally:
        writer.close()


async def idle_case(target, env, idle, active, chunks, interval_ms, quiet_s, log):
    port, pid = env[target + "_port"], env[target + "_pid"]
    conversation = await b.request_json(port, "POST", "/api/conversations", {"title": "idle"})
    gate = uuid.uuid4().hex
    created = await b.request_json(port, "POST", "/api/conversations/%s/messages" % conversation["id"],
                                   {"content": b.directive(1, 0, gate) + " hold_s=300", "model": "openai:bench"})
    message_id = created["assistant_message"]["id"]
    await asyncio.sleep(0.5)
    rss_before = rss_kib(pid)
    stop, opened = asyncio.Event(), [0]
    limiter = asyncio.Semaphore(CONNECT_PARALLEL)

    def on_open():
        opened[0] += 1

    async def one():
        async with limiter:
            pass  # paces the connects; the stream itself is held outside the semaphore
        try:
            return await idle_stream(port, message_id, on_open, stop)
        except (b.BenchError, OSError, asyncio.TimeoutError, ValueError) as error:
            return "%s: %s" % (type(error).__name__, error)

    opening = time.monotonic()
    tasks = [asyncio.ensure_future(one()) for _ in range(idle)]
    while opened[0] < idle and time.monotonic() - opening < 120 and not all(t.done() for t in tasks):
        await asyncio.sleep(0.1)
    open_s = time.monotonic() - opening
    log("  %d of %d idle streams open in %.1f s" % (opened[0], idle, open_s))
    result = {"idle": idle, "opened": opened[0], "open_s": open_s}
    try:
        await asyncio.sleep(1.0)
        result["rss_before_kib"], result["rss_idle_kib"] = rss_before, rss_kib(pid)
        result["rss_per_stream_kib"] = (result["rss_idle_kib"] - rss_before) / max(1, opened[0])
        meter = b.CPUMeter(pid)
        meter.start()
        client0, wall0 = client_cpu_s(), time.monotonic()
        await asyncio.sleep(quiet_s)
        quiet_ms, _ = meter.stop()
        wall = time.monotonic() - wall0
        result["idle_core_pct"] = quiet_ms / 10.0 / wall
        result["idle_client_core"] = (client_cpu_s() - client0) / wall
        streams = [Stream() for _ in range(active)]
        active_run = await scaled_active(port, env, streams, chunks, interval_ms)
        result.update(active_run)
        result["still_open"] = sum(1 for t in tasks if not t.done())
    finally:
        stop.set()
        try:
            await b.request_json(env["fake_port"], "POST", "/bench/release/%s" % gate)
        except (b.BenchError, OSError, asyncio.TimeoutError):
            pass
        done, pending = await asyncio.wait(tasks, timeout=30)
        for task in pending:
            task.cancel()
    outcomes = [t.result() for t in tasks if t.done() and not t.cancelled() and t.exception() is None]
    failures = [o for o in outcomes if o not in ("ok", "closed")]
    result["failed"] = len(failures)
    result["first_failure"] = failures[0] if failures else None
    return result


async def scaled_active(port, env, streams, chunks, interval_ms):
    """One live reply (`chunks` every `interval_ms`) to len(streams) subscribers; per-frame latency."""
    conversation = await b.request_json(port, "POST", "/api/conversations", {"title": "active"})
    gate = uuid.uuid4().hex
    created = await b.request_json(port, "POST", "/api/conversations/%s/messages" % conversation["id"],
                                   {"content": b.directive(chunks, interval_ms, gate), "model": "openai:bench"})
    message_id = created["assistant_message"]["id"]
    readies = [asyncio.Event() for _ in streams]
    tasks = [asyncio.ensure_future(b.parley_subscribe(port, message_id, "text", ready, True)) for ready in readies]
    client0, wall0 = client_cpu_s(), time.monotonic()
    try:
        await asyncio.wait_for(asyncio.gather(*(r.wait() for r in readies)), b.REQUEST_TIMEOUT_S)
        await b.request_json(env["fake_port"], "POST", "/bench/release/%s" % gate)
        results = await asyncio.gather(*tasks)
    finally:
        for task in tasks:
            task.cancel()
    latencies = [ns / 1e6 for clock, _ in results for ns in clock.latencies_ns]
    return {"active_p50": pct(latencies, 0.5), "active_p99": pct(latencies, 0.99),
            "active_chunks": sum(clock.count for clock, _ in results),
            "active_client_core": (client_cpu_s() - client0) / (time.monotonic() - wall0)}


# MARK: - Run


async def run(args, env, log, phase):
    """Every issue-10 figure; returns {key: result dict}."""
    out = {}
    targets = ["parley0", "parley25", "nginx"]
    phase("setup CPU per new stream: %d one-chunk streams over 1 s" % args.setup_streams)
    for target in ["parley25", "nginx"]:
        out[("setup", target)] = result = await setup_cpu(target, env, args.setup_streams)
        log("  %s: %.2f ms per stream (client %.0f%% of a core)" % (target, result["setup_ms"],
                                                                   100 * result["client_core"]))
    for count in args.scale_streams:
        phase("relay and starts: %d streams started over 1 s, %d chunks every %g ms"
              % (count, args.scale_chunks, args.scale_interval_ms))
        for target in targets:
            out[("run", count, target)] = r = await scaled_run(target, env, count, args.scale_chunks,
                                                               args.scale_interval_ms)
            log("  %s: POST p50/p99 %s/%s ms, first text (after upstream) p99 %s ms, relay p50/p99 %s/%s ms, "
                "CPU/1k %s ms (%.0f%% of chunks in the window), errors %d, client %.0f%%, upstream %.0f%% of a "
                "core, machine %.0f%% busy" % (
                    target, b.fmt(r["post_p50"]), b.fmt(r["post_p99"]), b.fmt(r["first_up_p99"]),
                    b.fmt(r["lat_p50"], 2), b.fmt(r["lat_p99"], 2), b.fmt(r["cpu_per_k"], 2),
                    100 * (r["window_share"] or 0), r["errors"], 100 * r["client_core"], 100 * r["upstream_core"],
                    100 * r["machine_busy"]))
            if r["first_error"]:
                log("    first error: %s" % r["first_error"])
    if args.idle_streams:
        phase("idle: %d event streams on a gated reply, %g s quiet, then %d active streams"
              % (args.idle_streams, args.idle_quiet_s, args.idle_active))
        out["idle"] = r = await idle_case(args.idle_target, env, args.idle_streams, args.idle_active,
                                          args.scale_chunks, args.scale_interval_ms, args.idle_quiet_s, log)
        log("  RSS %s KiB per stream, idle CPU %s%% of a core, active p99 %s ms, failed %d" % (
            b.fmt(r.get("rss_per_stream_kib")), b.fmt(r.get("idle_core_pct"), 2), b.fmt(r.get("active_p99"), 2),
            r["failed"]))
    return out


# MARK: - Report


def met(ok):
    return "–" if ok is None else ("met" if ok else "**not met**")


def le(value, limit):
    return None if value is None or limit is None else value <= limit


def whole_run_per_k(run, setup):
    """Server CPU over the whole run less `streams × setup CPU per stream`, per 1,000 chunks received: an
    estimate of the relay's share for runs where the CPU window after the last start holds few chunks."""
    if not run or not setup or not run["received"]:
        return None
    return max(0.0, run["server_cpu_ms"] - run["streams"] * setup["setup_ms"]) / (run["received"] / 1000.0)


def markdown_ratio(path):
    """The streaming/full-render ratio from parley-markdown-bench's output, if it ran."""
    import re
    try:
        with open(path) as handle:
            text = handle.read()
    except OSError:
        return None
    match = re.search(r"StableMarkdown[^|]*\|[^|]*\|\s*([\d.]+)×", text)
    return float(match.group(1)) if match else None


def report(args, env, s, add):
    fmt = b.fmt
    runs = lambda count, target: s.get(("run", count, target))
    add("## Scale on one machine (issue 10)")
    add("")
    add("Each stream drives Parley's real path: POST conversation, POST message, GET its event stream "
        "(`?mode=text`); nginx gets one proxied chat completion per stream from the same fake upstream. "
        "%d chunks per stream, %g ms apart; the streams' starts spread evenly over 1 s. One run per figure "
        "(no repetitions): read them as today's baseline, not as precise values. Client %% = this Python "
        "process's CPU over the run as a share of one core (event loop: %s); upstream %% = the fake upstream's."
        % (args.scale_chunks, args.scale_interval_ms, env.get("loop", "asyncio")))
    add("")
    add("### Starts")
    add("")
    add("| streams started within 1 s | target | POST message p50 / p99 (nginx: first byte) | first text after "
        "POST p50 / p99 | first text after upstream's first byte p50 / p99 | errors | client / upstream, % of a core | machine busy |")
    add("|---|---|---|---|---|---|---|---|")
    for count in [c for c in args.scale_streams if c > 1]:
        for target, label in (("parley25", "Parley (frame 25)"), ("parley0", "Parley (frame 0)"), ("nginx", "nginx")):
            r = runs(count, target)
            if r:
                add("| %d | %s | %s / %s ms | %s / %s ms | %s / %s ms | %d | %.0f / %.0f | %.0f%% |" % (
                    count, label, fmt(r["post_p50"]), fmt(r["post_p99"]), fmt(r["first_post_p50"]),
                    fmt(r["first_post_p99"]), fmt(r["first_up_p50"]), fmt(r["first_up_p99"]),
                    r["errors"] + r["short"], 100 * r["client_core"], 100 * r["upstream_core"],
                    100 * r["machine_busy"]))
    add("")
    add("### Relay")
    add("")
    add("Latency of every chunk (client receive − upstream send). CPU per 1,000 chunks: the server's CPU "
        "from the moment every stream had shown its first text to the end of the run, over the chunks "
        "received in that window (the setup is excluded; nginx: its one worker).")
    add("")
    add("| streams | Parley frame 0 p50 / p99 | Parley frame 25 p50 / p99 | nginx p50 / p99 | CPU ms per 1,000 "
        "chunks: Parley 0 / Parley 25 / nginx | chunks in that window, % (P0 / P25 / nginx) | client + upstream, "
        "% of a core (P0 / P25 / nginx) | machine busy, % of 2 cores (P0 / P25 / nginx) |")
    add("|---|---|---|---|---|---|---|---|")
    for count in args.scale_streams:
        p0, p25, ng = runs(count, "parley0"), runs(count, "parley25"), runs(count, "nginx")
        if not (p0 and p25 and ng):
            continue
        trio = lambda key, scale=100: " / ".join("%.0f" % (scale * (r[key] or 0)) for r in (p0, p25, ng))
        add("| %d | %s / %s ms | %s / %s ms | %s / %s ms | %s / %s / %s | %s | %s | %s |" % (
            count, fmt(p0["lat_p50"], 2), fmt(p0["lat_p99"], 2), fmt(p25["lat_p50"], 2), fmt(p25["lat_p99"], 2),
            fmt(ng["lat_p50"], 2), fmt(ng["lat_p99"], 2), fmt(p0["cpu_per_k"], 2), fmt(p25["cpu_per_k"], 2),
            fmt(ng["cpu_per_k"], 2), trio("window_share"),
            " / ".join("%.0f" % (100 * (r["client_core"] + r["upstream_core"])) for r in (p0, p25, ng)),
            trio("machine_busy")))
    add("")
    add("A chunk that arrives in a stream's first event (the snapshot, when the reply began before the client "
        "could subscribe) counts in the latency, with the delay the user saw; the CPU window holds only the "
        "chunks after every stream's first text, so where that share is small the CPU figure covers little of "
        "the run. Machine busy near 100%: the server, the Python client and the Python upstream together "
        "used both cores, so latency there also measures the load generator's own queueing.")
    add("")
    idle = s.get("idle")
    if idle:
        add("### Idle streams")
        add("")
        add("%d event streams (`?mode=text`) held open on one gated live reply of the %s server "
            "(heartbeats every PARLEY_HEARTBEAT_INTERVAL, default 15 s), opened in %.1f s, %d at a time. "
            "RSS %s → %s KiB. Then one live reply (%d chunks, %g ms apart) to %d other streams while they wait."
            % (idle["opened"], args.idle_target, idle["open_s"], CONNECT_PARALLEL, fmt(idle.get("rss_before_kib"), 0),
               fmt(idle.get("rss_idle_kib"), 0), args.scale_chunks, args.scale_interval_ms, args.idle_active))
        add("")
        add("| streams open | RSS per stream | CPU over %g s of quiet | active streams' latency p50 / p99 | "
            "still open at the end | failed | client %% of a core (quiet / active) |" % args.idle_quiet_s)
        add("|---|---|---|---|---|---|---|")
        add("| %d of %d | %s KiB | %s%% of a core | %s / %s ms | %s | %d | %.0f / %.0f |" % (
            idle["opened"], idle["idle"], fmt(idle.get("rss_per_stream_kib")), fmt(idle.get("idle_core_pct"), 2),
            fmt(idle.get("active_p50"), 2), fmt(idle.get("active_p99"), 2), idle.get("still_open", "–"),
            idle["failed"], 100 * idle.get("idle_client_core", 0), 100 * idle.get("active_client_core", 0)))
        add("")
        if idle.get("first_failure"):
            add("First failure: %s" % idle["first_failure"])
            add("")

    # Goals
    rows = []
    goal = lambda name, target, value, ok, note="": rows.append((name, target, value, met(ok), note))
    def bottleneck(*results):
        notes = []
        if any(r and max(r["client_core"], r["upstream_core"]) >= CLIENT_BOTTLENECK for r in results):
            notes.append("client or upstream ≥ %.0f%% of a core: may be client-bound" % (100 * CLIENT_BOTTLENECK))
        if any(r and r["machine_busy"] >= 0.9 for r in results):
            notes.append("machine ≥ 90%% busy (%s)" % " / ".join("%.0f%%" % (100 * r["machine_busy"]) for r in results if r))
        return "; ".join(notes)
    sp, sn = s.get(("setup", "parley25")), s.get(("setup", "nginx"))
    if sp:
        goal("setup CPU per new stream", "≤ 1 ms", "%s ms (nginx %s ms)" % (fmt(sp["setup_ms"], 2),
             fmt(sn["setup_ms"] if sn else None, 2)), le(sp["setup_ms"], 1.0))
    for count, first_limit in ((500, 100.0), (1000, 250.0)):
        r, ng = runs(count, "parley25"), runs(count, "nginx")
        if not r:
            continue
        clean = r["errors"] == 0 and r["short"] == 0
        if count == 500:
            goal("POST message p99, 500 starts in 1 s", "≤ 50 ms", "%s ms (nginx first byte %s ms)" % (
                fmt(r["post_p99"]), fmt(ng["post_p99"] if ng else None)), clean and le(r["post_p99"], 50.0),
                bottleneck(r))
        goal("first text p99 after upstream's first byte, %d starts" % count, "≤ %.0f ms" % first_limit,
             "%s ms (nginx %s ms)" % (fmt(r["first_up_p99"]), fmt(ng["first_up_p99"] if ng else None)),
             clean and le(r["first_up_p99"], first_limit), bottleneck(r) + ("" if clean else
             " %d errors/short streams" % (r["errors"] + r["short"])))
    for count in args.scale_streams:
        p0, p25, ng = runs(count, "parley0"), runs(count, "parley25"), runs(count, "nginx")
        if not (p0 and p25 and ng):
            continue
        if count >= 100:
            goal("relay p99, frame 0, %d streams" % count, "≤ 2× nginx", "%s ms vs %s ms (%s)" % (
                fmt(p0["lat_p99"], 2), fmt(ng["lat_p99"], 2), b.ratio(p0["lat_p99"], ng["lat_p99"])),
                le(p0["lat_p99"], 2 * ng["lat_p99"]) and p0["errors"] == 0, bottleneck(p0, ng))
        goal("relay p99, default 25 ms frames, %d stream%s" % (count, "" if count == 1 else "s"), "≤ nginx + 25 ms", "%s ms vs %s ms" % (
            fmt(p25["lat_p99"], 2), fmt(ng["lat_p99"], 2)), le(p25["lat_p99"], ng["lat_p99"] + 25)
            and p25["errors"] == 0, bottleneck(p25, ng))
        if count in (100, 500):
            windowed = min(r["window_share"] or 0 for r in (p0, p25, ng)) >= 0.5
            sp_, sn_ = s.get(("setup", "parley25")), s.get(("setup", "nginx"))
            if windowed:
                c0, c25, cn, how = p0["cpu_per_k"], p25["cpu_per_k"], ng["cpu_per_k"], "after the last start"
            else:
                c0, c25, cn = whole_run_per_k(p0, sp_), whole_run_per_k(p25, sp_), whole_run_per_k(ng, sn_)
                how = ("whole run less setup CPU × streams: the window after the last start held %s%% of "
                       "the chunks" % " / ".join("%.0f" % (100 * (r["window_share"] or 0)) for r in (p0, p25, ng)))
            goal("CPU per relayed chunk, %d streams" % count, "≤ 3× nginx",
                 "%s vs %s ms per 1,000 (%s; frame 0: %s)" % (fmt(c25, 2), fmt(cn, 2), b.ratio(c25, cn),
                                                             b.ratio(c0, cn)),
                 le(c25, 3 * cn) if c25 and cn else None, "; ".join(x for x in (how, bottleneck(p25, ng)) if x))
    if idle:
        goal("RSS per idle event stream, %d open" % idle["idle"], "≤ 30 KiB", "%s KiB" % fmt(idle.get("rss_per_stream_kib")),
             le(idle.get("rss_per_stream_kib"), 30.0))
        goal("idle CPU, %d streams with heartbeats" % idle["idle"], "< 2% of a core",
             "%s%%" % fmt(idle.get("idle_core_pct"), 2), le(idle.get("idle_core_pct"), 2.0))
        goal("10 active streams' p99 while %d wait" % idle["idle"], "≤ 5 ms per frame",
             "%s ms" % fmt(idle.get("active_p99"), 2), le(idle.get("active_p99"), 5.0))
        goal("concurrent connections accepted", "10,000", "%d of %d streams open, %s still open at the end" % (
            idle["opened"], idle["idle"], idle.get("still_open", "–")),
             (idle["opened"] >= 10000 and idle.get("still_open") == idle["opened"]) if idle["idle"] >= 10000 else None,
             "" if idle["idle"] >= 10000 else "run with fewer than 10,000 (--quick)")
    ratio = markdown_ratio(args.markdown_results)
    goal("Markdown streaming cost", "≤ 10× one full render", "%s× (%s)" % (fmt(ratio, 1), os.path.basename(
        args.markdown_results)) if ratio else "not run (make bench runs parley-markdown-bench)", le(ratio, 10.0))
    add("### Goals")
    add("")
    add("| goal | target | measured | | note |")
    add("|---|---|---|---|---|")
    for row in rows:
        add("| %s | %s | %s | %s | %s |" % row)
    add("")
