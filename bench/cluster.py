"""Several nodes (issue 24), measured side by side in one run, all on 127.0.0.1 and bounded in time.

Nodes: `single` (one node, SQLite, no Redis: today's default), and a cluster of three nodes `A`, `B`, `C`
on one PostgreSQL 15 and one Redis 7 (scripts/postgres-test-server.sh, scripts/redis-test-server.sh, in
a temp dir). Every node relays the same fake upstream (bench/fake_upstream.py) with frames of 0 ms,
so a delta is sent as it arrives.

Figures (medians over --reps, runs interleaved):
- relay latency of one paced stream (client receive time minus upstream send time, CLOCK_MONOTONIC):
  single; producer A read on A (the cluster's same-node path, through Redis); producer A read on B
  (cross-node). Goal: cross-node adds <= 2 ms p50 and <= 10 ms p99 over same-node.
- starts: N replies of 20 and 150 chunks (~340 and ~2,500 characters: a reply's length is what its
  search indexing costs; create, send, read to `done`) spread round-robin over 1 or 3 nodes; wall
  time and every process's CPU (nodes, PostgreSQL with its exited backends, Redis). On this 2-core
  machine 3 nodes cannot run faster than 1; what 3 machines would reach is COMPUTED from the CPU per start of one node.
- many streams: 500 and 1,000 paced streams started over 1 s, relay latency of every chunk (p50/p99) and
  CPU per 1,000 chunks, side by side: nginx relaying the upstream directly, one node (SQLite), and the
  three nodes behind nginx round-robin (each stream's conversation, message and event stream may land
  on three different nodes). All on this one 2-core machine: the cluster's figures include its
  PostgreSQL, Redis and nginx front, which share those cores with the nodes.
- failover: `kill -9` of the node running a paced reply, to the next delta on another node's tab
  (PARLEY_LEASE_SECONDS=5). Goal: <= lease + 1 s.
"""

import argparse
import asyncio
import os
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
import uuid

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)
sys.path.insert(0, HERE)
import bench  # noqa: E402  (processes, fake upstream, HTTP and SSE helpers)
import scale  # noqa: E402  (one paced stream through Parley or nginx, measured chunk by chunk)

PSQL = "/usr/lib/postgresql/15/bin/psql"


def script(name, *args):
    result = subprocess.run([os.path.join(REPO, "scripts", name), *args], check=True,
                            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, timeout=120)
    return result.stdout.decode().strip().splitlines()[-1]


def start_node(processes, binary, workdir, name, env_extra):
    env = {k: v for k, v in os.environ.items() if not k.startswith("PARLEY_")}
    env.update(bench.BENCH_LIMITS)
    env.update({"PARLEY_FRAME_INTERVAL_MS": "0", "PARLEY_TITLES": "off"})
    env.update(env_extra)
    log_path = os.path.join(workdir, "%s.log" % name)
    argv = [binary, "--port", "0", "--db", os.path.join(workdir, "%s.db" % name), "--public", os.path.join(REPO, "Public")]
    process = processes.start(name, argv, env=env, stdout=subprocess.PIPE, stderr=open(log_path, "wb"))
    line = bench.read_line(process, bench.START_TIMEOUT_S, "parley (%s)" % name)
    return process, int(line.rsplit(":", 1)[1])


async def relay(producer, reader, fake_port, chunks, interval_ms):
    """One paced reply started on `producer`, read (text mode) on `reader`: latencies in ms."""
    conversation = await bench.request_json(producer, "POST", "/api/conversations", {"title": "bench"})
    gate = uuid.uuid4().hex
    created = await bench.request_json(producer, "POST", "/api/conversations/%s/messages" % conversation["id"],
                                       {"content": bench.directive(chunks, interval_ms, gate), "model": "openai:bench"})
    ready = asyncio.Event()
    task = asyncio.ensure_future(bench.parley_subscribe(reader, created["assistant_message"]["id"], "text", ready, True))
    await asyncio.wait_for(ready.wait(), bench.REQUEST_TIMEOUT_S)
    await bench.request_json(fake_port, "POST", "/bench/release/%s" % gate)
    clock, _ = await task
    bench.check_count("relay", clock.count, chunks)
    return [ns / 1e6 for ns in clock.latencies_ns]


async def starts(ports, count, chunks, concurrency):
    """`count` short replies, round-robin over `ports`, at most `concurrency` at once: wall seconds."""
    limit = asyncio.Semaphore(concurrency)

    async def one(index):
        port = ports[index % len(ports)]
        async with limit:
            conversation = await bench.request_json(port, "POST", "/api/conversations", {"title": "s"})
            created = await bench.request_json(port, "POST", "/api/conversations/%s/messages" % conversation["id"],
                                               {"content": bench.directive(chunks, 0), "model": "openai:bench"})
            text = await read_text(port, created["assistant_message"]["id"])
            bench.check_count("start", len(bench.TOKEN.findall(text.encode())), chunks)

    began = time.monotonic()
    await asyncio.gather(*(one(i) for i in range(count)))
    return time.monotonic() - began


async def read_text(port, message_id):
    """A reply's text as a tab rebuilds it (snapshot, then deltas) once its `done` came."""
    status, headers, reader, writer = await bench.open_http(port, "GET", "/api/messages/%s/stream?mode=text" % message_id)
    text = [""]

    def on_events(events, received):
        for name, data in events:
            if name == "snapshot":
                text[0] = bench.json.loads(data)["content"]
            elif name == "delta":
                text[0] += bench.json.loads(data)["text"]
            elif name == "done":
                return True
        return False

    try:
        await bench.read_events(reader, headers, on_events)
    finally:
        writer.close()
    return text[0]


FRONT = """\
    upstream parley_nodes {{
{servers}        keepalive 64;
    }}
    server {{
        listen 127.0.0.1:{port} backlog=4096;
        location / {{
            proxy_pass http://parley_nodes;
            proxy_http_version 1.1;
            proxy_set_header Connection "";
            proxy_set_header Host $http_host;
            proxy_buffering off;
            proxy_request_buffering off;
            proxy_read_timeout 1h;
        }}
    }}
"""


async def many(target, port, groups, count, chunks, interval_ms, spread_s):
    """`count` paced streams started evenly over `spread_s` through `port` (nginx's direct relay when
    `target` is "nginx"): every chunk's latency, errors, and the CPU of each process group per 1,000
    chunks received (setup included)."""
    streams = [scale.Stream() for _ in range(count)]

    async def one(index, stream):
        await asyncio.sleep(spread_s * index / count)
        try:
            if target == "nginx":
                await scale.nginx_stream(port, chunks, interval_ms, stream, lambda: None)
            else:
                await scale.parley_stream(port, chunks, interval_ms, stream, lambda: None, titled=True)
        except (bench.BenchError, OSError, asyncio.TimeoutError, ValueError) as error:
            stream.error = "%s: %s" % (type(error).__name__, error)

    before = [cpu_seconds(group) for group in groups]
    await asyncio.gather(*(one(i, stream) for i, stream in enumerate(streams)))
    await asyncio.sleep(bench.SETTLE_S)
    after = [cpu_seconds(group) for group in groups]
    latencies = [value for stream in streams for value in stream.latencies_ms]
    received = sum(stream.chunks for stream in streams)
    errors = [stream.error for stream in streams if stream.error]
    thousands = max(received, 1) / 1000.0
    return {"p50": scale.pct(latencies, 0.5), "p99": scale.pct(latencies, 0.99), "errors": len(errors),
            "first_error": errors[0] if errors else None, "received": received,
            "short": sum(1 for stream in streams if not stream.error and stream.chunks != chunks),
            "cpu": [(a - b) * 1000 / thousands for a, b in zip(after, before)]}


def takeovers(workdir):
    """Replies the cluster's nodes took over so far (their logs): none may happen while every node lives."""
    total = 0
    for name in ("A", "B", "C"):
        try:
            with open(os.path.join(workdir, "%s.log" % name), errors="replace") as handle:
                total += sum(1 for line in handle if "failover:" in line and "takes over" in line)
        except OSError:
            pass
    return total


class Tree:
    """A process and all its children, the exited ones included: PostgreSQL's backends and autovacuum
    workers come and go, and an exited child's CPU is in its parent's cutime/cstime."""

    def __init__(self, pid):
        self.pid = pid

    def ticks(self):
        total = bench.cpu_ticks(self.pid, reaped_children=True)
        for child in bench.children_of(self.pid):
            try:
                total += bench.cpu_ticks(child)
            except OSError:
                pass  # exited just now: its time is in cutime/cstime from now on
        return total


def cpu_seconds(group):
    """CPU seconds of a group of pids and `Tree`s."""
    return sum(member.ticks() if isinstance(member, Tree) else bench.cpu_ticks(member) for member in group) / bench.CLK_TCK


async def failover(processes, binary, workdir, fake_port, settings, lease_s):
    """kill -9 of the node running a paced reply: seconds to the next delta on another node's tab."""
    victim, victim_port = start_node(processes, binary, workdir, "victim", settings)
    _, watcher = start_node(processes, binary, workdir, "watcher", settings)
    conversation = await bench.request_json(victim_port, "POST", "/api/conversations", {"title": "f"})
    created = await bench.request_json(victim_port, "POST", "/api/conversations/%s/messages" % conversation["id"],
                                       {"content": bench.directive(400, 20), "model": "openai:bench"})
    path = "/api/messages/%s/stream?mode=text" % created["assistant_message"]["id"]
    status, headers, reader, writer = await bench.open_http(watcher, "GET", path)
    killed = [None]
    gap = [None]

    def on_events(events, received):
        for name, _ in events:
            if name == "delta" and killed[0] is None:
                killed[0] = time.monotonic()
                os.kill(victim.pid, signal.SIGKILL)
            elif name in ("delta", "snapshot") and killed[0] is not None and gap[0] is None \
                    and time.monotonic() - killed[0] > 0.05:
                gap[0] = time.monotonic() - killed[0]
                return True
            elif name == "done":
                return True
        return False

    try:
        await asyncio.wait_for(bench.read_events(reader, headers, on_events), lease_s + 30)
    finally:
        writer.close()
    return gap[0]


async def run(args, log):
    processes = bench.Processes()
    workdir = tempfile.mkdtemp(prefix="parley-cluster-bench-", dir="/tmp")
    os.chmod(workdir, 0o755)
    results = {"single": [], "same": [], "cross": [], "starts": {}, "many": {}, "failover": None}
    try:
        _, fake_port = bench.start_fake(processes, workdir)
        postgres = script("postgres-test-server.sh", "start", os.path.join(workdir, "pg"))
        redis = script("redis-test-server.sh", "start", os.path.join(workdir, "redis"))
        subprocess.run([PSQL, postgres, "-qc", "CREATE DATABASE bench"], check=True, timeout=60)
        subprocess.run([PSQL, postgres, "-qc", "CREATE DATABASE failover"], check=True, timeout=60)
        provider = {"PARLEY_OPENAI_BASE_URL": "http://127.0.0.1:%d/v1" % fake_port, "PARLEY_OPENAI_MODELS": "bench"}
        cluster = dict(provider, PARLEY_DATABASE_URL=postgres.rsplit("/", 1)[0] + "/bench", PARLEY_REDIS_URL=redis,
                       PARLEY_REDIS_PREFIX="bench:")
        single, single_port = start_node(processes, args.binary, workdir, "single", provider)
        nodes = [start_node(processes, args.binary, workdir, name, cluster) for name in ("A", "B", "C")]
        ports = [port for _, port in nodes]
        front_port = bench.free_port()
        servers = "".join("        server 127.0.0.1:%d;\n" % port for port in ports)
        nginx = shutil.which("nginx") or "/usr/sbin/nginx"
        _, nginx_port, nginx_worker = bench.start_nginx(processes, nginx, workdir, fake_port,
                                                        FRONT.format(servers=servers, port=front_port))
        for rep in range(args.reps):
            log("relay rep %d/%d" % (rep + 1, args.reps))
            for target, (producer, reader) in (("single", (single_port, single_port)), ("same", (ports[0], ports[0])),
                                               ("cross", (ports[0], ports[1]))):
                latencies = await relay(producer, reader, fake_port, args.chunks, args.interval_ms)
                results[target].append((statistics.median(latencies), bench.percentile(latencies, 0.99)))
        services = [int(open(os.path.join(workdir, "redis", "redis.pid")).read())]
        pg_pid = int(open(os.path.join(workdir, "pg", "data", "postmaster.pid")).readline())
        for chunks in args.start_chunks:
            for label, targets in (("1 node, SQLite", [single_port]), ("1 node of the cluster", ports[:1]),
                                   ("3 nodes", ports)):
                pids = [single.pid] if targets == [single_port] else [p.pid for p, port in nodes if port in targets]
                clustered = targets != [single_port]
                groups = [pids, [Tree(pg_pid)] if clustered else [], services if clustered else []]
                before = [cpu_seconds(group) for group in groups]
                wall = await starts(targets, args.starts, chunks, args.concurrency)
                await asyncio.sleep(bench.SETTLE_S)
                after = [cpu_seconds(group) for group in groups]
                results["starts"][(label, chunks)] = (wall,) + tuple((a - b) / args.starts * 1000
                                                                     for a, b in zip(after, before))
                log("%s: %d starts of %d chunks in %.2f s" % (label, args.starts, chunks, wall))
        node_pids = [process.pid for process, _ in nodes]
        for count in args.scale_streams:
            for target, port, groups in (
                    ("nginx", nginx_port, [[nginx_worker]]),
                    ("single", single_port, [[single.pid]]),
                    ("cluster", front_port, [node_pids, node_pids + [Tree(pg_pid)] + services + [nginx_worker],
                                             [Tree(pg_pid)], services, [nginx_worker]])):
                log("%d streams: %s" % (count, target))
                before = takeovers(workdir)
                results["many"][(count, target)] = await many(target, port, groups, count, args.scale_chunks,
                                                              args.scale_interval_ms, 1.0)
                results["many"][(count, target)]["takeovers"] = takeovers(workdir) - before
        for process, _ in nodes:
            bench.stop(process, signal.SIGTERM)
        failover_settings = dict(provider, PARLEY_DATABASE_URL=postgres.rsplit("/", 1)[0] + "/failover",
                                 PARLEY_REDIS_URL=redis, PARLEY_REDIS_PREFIX="failover:", PARLEY_LEASE_SECONDS="5")
        results["failover"] = await failover(processes, args.binary, workdir, fake_port, failover_settings, 5)
    finally:
        processes.stop_all()
        for name, sub in (("redis-test-server.sh", "redis"), ("postgres-test-server.sh", "pg")):
            subprocess.run([os.path.join(REPO, "scripts", name), "stop", os.path.join(workdir, sub)],
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, timeout=120)
        if not os.environ.get("BENCH_KEEP"):
            shutil.rmtree(workdir, ignore_errors=True)
        else:
            log("kept " + workdir)
    return results


def report(args, results):
    def med(pairs, index):
        return statistics.median(pair[index] for pair in pairs)

    lines = ["", "Several nodes (bench/cluster.py): relay of one stream of %d chunks every %g ms, frames 0 ms, "
             "medians of %d runs" % (args.chunks, args.interval_ms, args.reps), "",
             "| path | p50 ms | p99 ms |", "|---|---|---|"]
    for label, key in (("one node, SQLite, no Redis", "single"), ("cluster, producer A read on A (same node)", "same"),
                       ("cluster, producer A read on B (cross-node)", "cross")):
        lines.append("| %s | %.2f | %.2f |" % (label, med(results[key], 0), med(results[key], 1)))
    p50 = med(results["cross"], 0) - med(results["same"], 0)
    p99 = med(results["cross"], 1) - med(results["same"], 1)
    lines.append("")
    lines.append("cross-node over same-node: %+.2f ms p50 (goal <= 2: %s), %+.2f ms p99 (goal <= 10: %s); "
                 "what the Redis hop costs a frame on one node: %+.2f ms p50" % (
                     p50, "met" if p50 <= 2 else "not met", p99, "met" if p99 <= 10 else "not met",
                     med(results["same"], 0) - med(results["single"], 0)))
    lines += ["", "| %d starts, %d at once, all on this machine | reply | wall s | starts/s | node CPU ms/start | "
              "PostgreSQL CPU ms/start | Redis CPU ms/start |" % (args.starts, args.concurrency),
              "|---|---|---|---|---|---|---|"]
    for (label, chunks), (wall, node_ms, pg_ms, redis_ms) in results["starts"].items():
        lines.append("| %s | %d chunks (~%d characters) | %.2f | %.0f | %.2f | %.2f | %.2f |" % (
            label, chunks, 17 * chunks, wall, args.starts / wall, node_ms, pg_ms, redis_ms))
    for chunks in args.start_chunks:
        one = results["starts"].get(("1 node of the cluster", chunks))
        if not one:
            continue
        node = 2000 / one[1] if one[1] > 0 else float("nan")
        database = 2000 / one[2] if one[2] > 0 else float("nan")
        lines.append("")
        lines.append("COMPUTED, not measured (%d-chunk replies): with 2 cores a machine, one node tops out near %.0f "
                     "starts/s (%.2f ms of CPU each), three near %.0f (3.0x); PostgreSQL, at %.2f ms a start, tops out "
                     "near %.0f starts/s on 2 cores of its own, so 3 nodes reach 2.5x one with a PostgreSQL machine of "
                     "%d+ cores (Redis: %.2f ms a start)." % (
                         chunks, node, one[1], 3 * node, one[2], database,
                         max(2, int(2 * 2.5 * node / database + 0.999)) if database == database else 0, one[3]))
    if results["many"]:
        lines += ["", "%d-chunk streams every %g ms, started over 1 s (relay latency = client receive - upstream send; "
                  "CPU per 1,000 chunks received, setup included; all on this one 2-core machine)" % (
                      args.scale_chunks, args.scale_interval_ms), "",
                  "| streams | path | relay p50 ms | relay p99 ms | p99 / nginx | CPU ms / 1,000 chunks: nodes | "
                  "all processes | errors, short, takeovers |", "|---|---|---|---|---|---|---|---|"]
        labels = {"nginx": "nginx relaying the upstream", "single": "1 node, SQLite",
                  "cluster": "3 nodes behind nginx (PostgreSQL + Redis)"}
        for (count, target), r in results["many"].items():
            nginx_p99 = results["many"].get((count, "nginx"), {}).get("p99")
            ratio = "%.1fx" % (r["p99"] / nginx_p99) if nginx_p99 and r["p99"] is not None else "-"
            every = r["cpu"][1] if len(r["cpu"]) > 1 else r["cpu"][0]
            shares = (" (PostgreSQL %.0f, Redis %.0f, nginx %.0f)" % tuple(r["cpu"][2:5])) if len(r["cpu"]) == 5 else ""
            lines.append("| %d | %s | %.1f | %.1f | %s | %.1f | %.1f%s | %d, %d, %d%s |" % (
                count, labels[target], r["p50"] or 0, r["p99"] or 0, ratio, r["cpu"][0], every, shares, r["errors"],
                r["short"], r["takeovers"], (" (" + r["first_error"][:80] + ")") if r["first_error"] else ""))
    if results["failover"] is not None:
        lines.append("")
        lines.append("failover: kill -9 of the generating node to the next text on another node's tab: %.2f s "
                     "(lease 5 s; goal <= lease + 1 s: %s)" % (results["failover"],
                                                              "met" if results["failover"] <= 6 else "not met"))
    return "\n".join(lines)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--binary", default=os.environ.get("PARLEY_BIN", os.path.join(REPO, ".build/release/parley")))
    parser.add_argument("--reps", type=int, default=3)
    parser.add_argument("--chunks", type=int, default=200)
    parser.add_argument("--interval-ms", type=float, default=10)
    parser.add_argument("--starts", type=int, default=300)
    parser.add_argument("--concurrency", type=int, default=50)
    parser.add_argument("--start-chunks", type=lambda text: [int(n) for n in text.split(",") if n], default=[20, 150],
                        help="comma-separated reply lengths of the starts runs, in chunks (~17 characters each)")
    parser.add_argument("--scale-streams", type=lambda text: [int(n) for n in text.split(",") if n], default=[500, 1000],
                        help="comma-separated stream counts of the many-streams runs (empty: none)")
    parser.add_argument("--scale-chunks", type=int, default=200)
    parser.add_argument("--scale-interval-ms", type=float, default=20)
    args = parser.parse_args()
    results = asyncio.run(run(args, lambda message: print("cluster bench: " + message, file=sys.stderr, flush=True)))
    print(report(args, results))


if __name__ == "__main__":
    main()
