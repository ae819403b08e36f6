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
        self.start_ms = None        # POST conversation + POST message, or the one-request start, ms
        self.first_after_post_ms = None
        self.first_after_upstream_ms = None
        self.latencies_ms = []      # every chunk: receive − upstream send
        self.receive_ns = []        # receive time of every chunk
        self.chunks = 0
        self.error = None


def tokens(text):
    return [int(m.group(1)) for m in b.TOKEN.finditer(text)]


class NoOneRequestStart(Exception):
    """The server created the conversation but answered no `assistant_message`: it has no one-request start."""


def conversation_body(titled, model=None, content=None):
    """POST /api/conversations body. `titled`: a title is given, so the titler (PARLEY_TITLES) does not name
    the conversation after its first answer: titles off. Without it, as the page sends it, each new
    conversation makes a title request to the model once its first answer ends: titles on."""
    body = {"title": "scale"} if titled else {}
    if model:
        body["model"] = model
    if content is not None:
        body["message"] = {"content": content}
    return body


async def parley_stream(port, chunks, interval_ms, stream, first_text, extra="", titled=False, one_request=False):
    """Conversation and message (two requests, or one `POST /api/conversations` carrying `message` when
    `one_request`), then the event stream to `done` (text mode), filling `stream`."""
    content = b.directive(chunks, interval_ms) + extra
    if one_request:
        posted = time.monotonic_ns()
        created = await b.request_json(port, "POST", "/api/conversations",
                                       conversation_body(titled, "openai:bench", content))
        if not isinstance(created, dict) or not isinstance(created.get("assistant_message"), dict):
            raise NoOneRequestStart()
        stream.post_ms = stream.start_ms = (time.monotonic_ns() - posted) / 1e6
    else:
        began = time.monotonic_ns()
        conversation = await b.request_json(port, "POST", "/api/conversations", conversation_body(titled))
        posted = time.monotonic_ns()
        created = await b.request_json(port, "POST", "/api/conversations/%s/messages" % conversation["id"],
                                       {"content": content, "model": "openai:bench"})
        stream.post_ms = (time.monotonic_ns() - posted) / 1e6
        stream.start_ms = (time.monotonic_ns() - began) / 1e6
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


VARIANTS = {
    # name: (server, titled, one_request). Parley variants without a suffix run as users do: no title
    # given, so each new conversation asks the model for a title after its first answer (titles on).
    "nginx": ("nginx", False, False),
    "parley0": ("parley0", False, False),
    "parley25": ("parley25", False, False),
    "parley0-notitles": ("parley0", True, False),
    "parley25-notitles": ("parley25", True, False),
    "parley25-onereq": ("parley25", False, True),
}
LABELS = {
    "nginx": "nginx", "parley0": "Parley frame 0", "parley25": "Parley frame 25",
    "parley0-notitles": "Parley frame 0, titles off", "parley25-notitles": "Parley frame 25, titles off",
    "parley25-onereq": "Parley frame 25, one-request start",
}
SETTLE_UPSTREAM_S = 20.0  # longest wait for the upstream requests a run caused (titles) to end


async def upstream_stats(env):
    return await b.request_json(env["fake_port"], "GET", "/bench/stats")


async def settle_upstream(env, expected=0, quiet_s=0.0):
    """Waits until the upstream has seen `expected` requests in all and every request started has ended
    (the title requests after the last answers), or, for a server that makes fewer, until nothing has
    changed for `quiet_s`; at most SETTLE_UPSTREAM_S. Returns the seconds waited."""
    began = time.monotonic()
    last, since = None, began
    while time.monotonic() - began < SETTLE_UPSTREAM_S:
        stats = await upstream_stats(env)
        now = time.monotonic()
        state = (stats["streams"], stats["finished"])
        if state != last:
            last, since = state, now
        if stats["finished"] >= stats["streams"] and (stats["streams"] >= expected or now - since >= quiet_s):
            return now - began
        await asyncio.sleep(0.05)
    return time.monotonic() - began


async def scaled_run(variant, env, count, chunks, interval_ms, spread_s=1.0, perf=None):
    """`count` streams started evenly over `spread_s`; returns a dict of figures. The server's CPU is read
    once the upstream requests the run caused (the title requests) have ended. `perf`: a callable
    (pid) -> (stop callable) that profiles the server over the run."""
    target, titled, one_request = VARIANTS[variant]
    port = env[target + "_port"]
    pid = env["nginx_worker"] if target == "nginx" else env[target + "_pid"]
    await settle_upstream(env)
    await asyncio.sleep(b.SETTLE_S)
    upstream0 = await upstream_stats(env)
    profile = perf(pid) if perf and target != "nginx" else None
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
                await parley_stream(port, chunks, interval_ms, stream, first_text, titled=titled,
                                    one_request=one_request)
        except (b.BenchError, NoOneRequestStart, OSError, asyncio.TimeoutError, ValueError) as error:
            stream.error = "%s: %s" % (type(error).__name__, error)

    try:
        await asyncio.gather(*(one(i, s) for i, s in enumerate(streams)))
        streams_end = time.monotonic()
        # Titles on: each start makes a second upstream request once its answer has ended.
        per_start = 1 if target == "nginx" or titled else 2
        settle_s = await settle_upstream(env, upstream0["streams"] + per_start * count, quiet_s=1.0)
        await asyncio.sleep(b.SETTLE_S)
    finally:
        if profile:
            profile()
    server_ms, _ = server.stop()
    upstream_ms, _ = upstream.stop()
    wall = time.monotonic() - wall0
    machine1 = machine_busy()
    client_ms = (client_cpu_s() - client0) * 1000
    relay_ms = relay_server.stop()[0] if relay_from[0] else None
    upstream1 = await upstream_stats(env)
    errors = [s.error for s in streams if s.error]
    short = sum(1 for s in streams if not s.error and s.chunks != chunks)
    latencies = [v for s in streams for v in s.latencies_ms]
    relayed_after = sum(1 for s in streams for t in s.receive_ns if relay_from[0] and t >= relay_from[0])
    received = sum(s.chunks for s in streams)
    ok = [s for s in streams if not s.error]
    return {
        "streams": count, "errors": len(errors), "first_error": errors[0] if errors else None, "short": short,
        "upstream_per_start": (upstream1["streams"] - upstream0["streams"]) / count,
        "settle_s": settle_s, "streams_s": streams_end - wall0, "loadavg": os.getloadavg()[0],
        "start_p50": pct([s.start_ms for s in ok if s.start_ms is not None], 0.5),
        "start_p99": pct([s.start_ms for s in ok if s.start_ms is not None], 0.99),
        "post_p50": pct([s.post_ms for s in ok if s.post_ms is not None], 0.5),
        "post_p99": pct([s.post_ms for s in ok if s.post_ms is not None], 0.99),
        "first_post_p50": pct([s.first_after_post_ms for s in ok if s.chunks], 0.5),
        "first_post_p99": pct([s.first_after_post_ms for s in ok if s.chunks], 0.99),
        "first_up_p50": pct([s.first_after_upstream_ms for s in ok if s.chunks], 0.5),
        "first_up_p99": pct([s.first_after_upstream_ms for s in ok if s.chunks], 0.99),
        "lat_p50": pct(latencies, 0.5), "lat_p99": pct(latencies, 0.99),
        "cpu_per_k": (relay_ms / (relayed_after / 1000.0)) if relay_ms and relayed_after else None,
        "server_cpu_ms": server_ms, "wall_s": wall, "cpu_per_stream": server_ms / count,
        "client_core": client_ms / 1000.0 / wall, "upstream_core": upstream_ms / 1000.0 / wall,
        "machine_busy": (machine1[0] - machine0[0]) / max(1, machine1[1] - machine0[1]),
        "window_share": relayed_after / received if received else None, "received": received,
    }


async def setup_cpu(variant, env, count):
    """Server CPU ms per new stream: `count` one-chunk streams started over 1 s (with titles on, the title
    request each makes after its answer counts too: the run ends when the upstream has no request left)."""
    result = await scaled_run(variant, env, count, 1, 0)
    result["setup_ms"] = result["server_cpu_ms"] / count
    return result


async def one_request_start(env, target="parley25"):
    """Whether the server starts a conversation and its first reply in one request (issue 23): a 201 to
    `POST /api/conversations` with `message` that holds an `assistant_message`."""
    stream = Stream()
    try:
        await parley_stream(env[target + "_port"], 1, 0, stream, lambda: None, titled=True, one_request=True)
        return True
    except (b.BenchError, NoOneRequestStart):
        return False


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


def variants_for(args, count, one_request):
    """The variants run at `count` streams: frame 0, frame 25 and nginx everywhere; at 100 streams also
    titles off (frame 25: the CPU goal); at the storm's count titles off for both and, when the server
    has it, the one-request start. `--variants` replaces the list."""
    if args.variants:
        return [v for v in args.variants if v != "parley25-onereq" or one_request]
    variants = ["parley0", "parley25", "nginx"]
    if count == 100:
        variants.append("parley25-notitles")
    if count == args.storm_streams:
        variants += ["parley0-notitles", "parley25-notitles"] + (["parley25-onereq"] if one_request else [])
    return variants


def reps_for(args, count):
    """Issue 23's goals are at 100 and 500 streams: those runs are repeated; one stream and 1,000 run once
    (`--big-reps`)."""
    return args.storm_reps if 1 < count <= args.storm_streams else args.big_reps


def run_line(variant, r):
    return ("  %s: server CPU %s ms per stream (whole run), start p99 %s ms, POST p50/p99 %s/%s ms, first text (after upstream) p99 %s ms, relay p50/p99 "
            "%s/%s ms, CPU/1k %s ms (%.0f%% of chunks in the window), upstream requests per start %.2f, errors %d, "
            "client %.0f%%, upstream %.0f%% of a core, machine %.0f%% busy, load %.1f" % (
                variant, b.fmt(r["server_cpu_ms"] / r["streams"], 2), b.fmt(r["start_p99"]), b.fmt(r["post_p50"]), b.fmt(r["post_p99"]), b.fmt(r["first_up_p99"]),
                b.fmt(r["lat_p50"], 2), b.fmt(r["lat_p99"], 2), b.fmt(r["cpu_per_k"], 2),
                100 * (r["window_share"] or 0), r["upstream_per_start"], r["errors"] + r["short"],
                100 * r["client_core"], 100 * r["upstream_core"], 100 * r["machine_busy"], r["loadavg"]))


async def run(args, env, log, phase, perf=None, out=None):
    """Every start, relay and idle figure into `out` (returned): {key: [result dict per repetition]} (idle:
    one dict). Repetitions interleave the variants, so machine noise spreads over them evenly."""
    out = {} if out is None else out
    only = args.only
    one_request = await one_request_start(env)
    out["one_request"] = one_request
    log("  one-request start (POST /api/conversations with `message`): %s" % ("yes" if one_request else "n/a"))
    if "setup" in only:
        variants = ["parley25", "parley25-notitles", "nginx"] + (["parley25-onereq"] if one_request else [])
        if args.variants:
            variants = [v for v in variants if v in args.variants]
        phase("setup CPU per new stream: %d one-chunk streams over 1 s, %d reps of %s"
              % (args.setup_streams, args.setup_reps, ", ".join(variants)))
        for rep in range(args.setup_reps):
            for variant in variants:
                result = await setup_cpu(variant, env, args.setup_streams)
                out.setdefault(("setup", variant), []).append(result)
                log("  rep %d %s: %.2f ms per stream, upstream requests per start %.2f (client %.0f%% of a core, "
                    "machine %.0f%% busy)" % (rep + 1, variant, result["setup_ms"], result["upstream_per_start"],
                                             100 * result["client_core"], 100 * result["machine_busy"]))
    if "scale" in only:
        for count in args.scale_streams:
            variants, reps = variants_for(args, count, one_request), reps_for(args, count)
            phase("relay and starts: %d streams started over 1 s, %d chunks every %g ms, %d reps of %s"
                  % (count, args.scale_chunks, args.scale_interval_ms, reps, ", ".join(variants)))
            for rep in range(reps):
                for variant in variants:
                    tag = "%s-%d-rep%d" % (variant, count, rep + 1)
                    r = await scaled_run(variant, env, count, args.scale_chunks, args.scale_interval_ms,
                                         perf=(lambda pid, tag=tag: perf(pid, tag)) if perf else None)
                    out.setdefault(("run", count, variant), []).append(r)
                    log(run_line("rep %d %s" % (rep + 1, variant), r))
                    if r["first_error"]:
                        log("    first error: %s" % r["first_error"])
    if args.idle_streams and "idle" in only:
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


def values(results, key):
    return [r[key] for r in results or [] if r.get(key) is not None]


def med(results, key):
    """The median of a figure over a variant's repetitions (None when no repetition has it)."""
    found = values(results, key)
    return b.median(found)


def cell(results, key, digits=1):
    """median (min–max) of a figure over the repetitions; the median alone when there is one."""
    found = values(results, key)
    if len(found) == 1:
        return b.fmt(found[0], digits)
    return b.spread(found, digits)


def whole_run_per_k(runs, setups):
    """Server CPU over the whole run less `streams × setup CPU per stream`, per 1,000 chunks received: an
    estimate of the relay's share for runs where the CPU window after the last start holds few chunks
    (medians over the repetitions)."""
    setup_ms = med(setups, "setup_ms")
    estimates = [max(0.0, r["server_cpu_ms"] - r["streams"] * setup_ms) / (r["received"] / 1000.0)
                 for r in runs or [] if setup_ms is not None and r["received"]]
    return b.median(estimates)


def relay_cpu(s, count, variant):
    """CPU ms per 1,000 relayed chunks of a variant: the window after the last start when it held at least
    half the chunks, else the whole run less setup CPU × streams (the variant's setup runs, else frame 25's)."""
    runs = s.get(("run", count, variant))
    if not runs:
        return None
    if (med(runs, "window_share") or 0) >= 0.5:
        return med(runs, "cpu_per_k")
    server = VARIANTS[variant][0]
    setups = s.get(("setup", variant)) or s.get(("setup", "nginx" if server == "nginx" else "parley25"))
    return whole_run_per_k(runs, setups)


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
    runs = lambda count, variant: s.get(("run", count, variant))
    add("## Starts and relay at scale (issues 10 and 23)")
    add("")
    add("Each stream drives Parley's real path: POST conversation, POST message, GET its event stream "
        "(`?mode=text`), or with the one-request start one POST conversation carrying `message`; nginx gets "
        "one proxied chat completion per stream from the same fake upstream. %d chunks per stream, %g ms "
        "apart; the streams' starts spread evenly over 1 s. Runs of 2 to %d streams are repeated %d times, "
        "others %d time(s), the variants interleaved within a repetition; a cell shows the median and, "
        "in brackets, the range (min–max) of the repetitions. Titles on (plain variants, as users run it): the "
        "conversation is made without a title, so after its first answer the server asks the model for one "
        "(a second upstream request: the fake upstream streams it 24 chunks at the question's pace); titles "
        "off: a title is given, so no title request is made. Every run ends when the upstream has no request "
        "left, so the CPU figures include the title requests. Client %% = this Python process's CPU over the "
        "run as a share of one core (event loop: %s); upstream %% = the fake upstream's."
        % (args.scale_chunks, args.scale_interval_ms, args.storm_streams, args.storm_reps, args.big_reps,
           env.get("loop", "asyncio")))
    add("")
    one = s.get("one_request")
    add("One-request start (`POST /api/conversations` with `message`, answered with `assistant_message`): %s."
        % ("measured" if one else "n/a, the server answers it without an `assistant_message`"))
    add("")
    add("### Starts")
    add("")
    add("| streams started within 1 s | variant | start p99 (both requests) | POST message p50 / p99 (nginx: first "
        "byte) | first text after POST p99 | first text after upstream's first byte p50 / p99 | upstream requests "
        "per start | errors | client / upstream, % of a core | machine busy |")
    add("|---|---|---|---|---|---|---|---|---|---|")
    for count in [c for c in args.scale_streams if c > 1]:
        for variant in LABELS:
            r = runs(count, variant)
            if r:
                add("| %d | %s | %s ms | %s / %s ms | %s ms | %s / %s ms | %s | %s | %.0f / %.0f | %.0f%% |" % (
                    count, LABELS[variant], cell(r, "start_p99"), fmt(med(r, "post_p50")), cell(r, "post_p99"),
                    cell(r, "first_post_p99"), fmt(med(r, "first_up_p50")), cell(r, "first_up_p99"),
                    fmt(med(r, "upstream_per_start"), 2), sum(x["errors"] + x["short"] for x in r),
                    100 * med(r, "client_core"), 100 * med(r, "upstream_core"), 100 * med(r, "machine_busy")))
    add("")
    add("### Relay")
    add("")
    add("Latency of every chunk (client receive − upstream send). CPU per 1,000 chunks: the server's CPU "
        "from the moment every stream had shown its first text to the end of the run (its title requests "
        "included), over the chunks received in that window (the setup is excluded; nginx: its one worker).")
    add("")
    add("| streams | variant | relay p50 | relay p99 | CPU ms per 1,000 chunks | chunks in that window | "
        "server CPU ms per stream, whole run | client + upstream, % of a core | machine busy, % of 2 cores |")
    add("|---|---|---|---|---|---|---|---|---|")
    for count in args.scale_streams:
        for variant in LABELS:
            r = runs(count, variant)
            if r:
                add("| %d | %s | %s ms | %s ms | %s | %.0f%% | %s | %.0f | %.0f |" % (
                    count, LABELS[variant], fmt(med(r, "lat_p50"), 2), cell(r, "lat_p99", 1), cell(r, "cpu_per_k", 2),
                    100 * (med(r, "window_share") or 0), cell(r, "cpu_per_stream", 2), 100 * (med(r, "client_core") + med(r, "upstream_core")),
                    100 * med(r, "machine_busy")))
    add("")
    add("A chunk that arrives in a stream's first event (the snapshot, when the reply began before the client "
        "could subscribe) counts in the latency, with the delay the user saw; the CPU window holds only the "
        "chunks after every stream's first text, so where that share is small the CPU figure covers little of "
        "the run. Machine busy near 100%: the server, the Python client and the Python upstream together "
        "used both cores, so latency there also measures the load generator's own queueing.")
    add("")
    costs(args, s, add)
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


def costs(args, s, add):
    """What titles cost (on against off) and what the one-request start saves (against two requests),
    side by side from the same run."""
    fmt = b.fmt
    count = args.storm_streams
    pairs = [("titles: on / off", "parley25", "parley25-notitles", "parley0", "parley0-notitles")]
    if s.get("one_request"):
        pairs.append(("start: one request / two", "parley25-onereq", "parley25", None, None))
    rows = []
    for label, a, b_, a0, b0 in pairs:
        sa, sb = s.get(("setup", a)), s.get(("setup", b_))
        ra, rb = s.get(("run", count, a)), s.get(("run", count, b_))
        r0a, r0b = (s.get(("run", count, a0)), s.get(("run", count, b0))) if a0 else (None, None)
        pair = lambda x, y, key, digits=1: "%s / %s (%s)" % (fmt(med(x, key), digits), fmt(med(y, key), digits),
                                                             b.ratio(med(x, key), med(y, key)))
        ca, cb = relay_cpu(s, count, a), relay_cpu(s, count, b_)
        rows.append("| %s | %s | %s | %s | %s | %s | %s / %s (%s) | %s |" % (
            label, pair(sa, sb, "setup_ms", 2), pair(ra, rb, "start_p99"), pair(ra, rb, "post_p99"),
            pair(ra, rb, "first_up_p99"), pair(r0a, r0b, "lat_p99") if a0 else "–",
            fmt(ca, 1), fmt(cb, 1), b.ratio(ca, cb), pair(ra, rb, "upstream_per_start", 2)))
    if not any(s.get(("setup", v)) or s.get(("run", count, v)) for v in ("parley25-notitles", "parley25-onereq")):
        return
    add("### What titles and the one-request start cost")
    add("")
    add("Medians of the repetitions, frame 25 unless named; the ratio is the first over the second. Setup: %d "
        "one-chunk streams over 1 s; the rest: %d starts over 1 s. With the one-request start `start p99` and "
        "`POST p99` are the same request. CPU per 1,000 chunks: the window after the last start, or where it "
        "held under half the chunks the whole run less setup CPU × streams." % (args.setup_streams, count))
    add("")
    add("| | setup CPU per stream, ms | start p99 (all requests), ms | POST p99, ms | first text p99 after "
        "upstream, ms | relay p99 frame 0, ms | CPU ms per 1,000 chunks | upstream requests per start |")
    add("|---|---|---|---|---|---|---|---|")
    for row in rows:
        add(row)
    add("")
