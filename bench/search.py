"""Parley search bench (issue 12): full-text search over 100,000 messages, p99 against the 50 ms goal.

Standard library only. Starts Parley once on an empty database (so its own migrations make the schema),
stops it, writes the messages straight into the SQLite file (the migration's triggers index them, as
they do for Parley's own writes), starts Parley again and times `GET /api/conversations?q=...` over one
keep-alive connection: single words of every frequency, two-word AND queries, phrases, prefixes and CJK.
Prints one Markdown table row (also written to bench/search-results.md). Every process it starts is
stopped at the end, also on error; the whole run stops itself after --time-limit.
"""

import argparse
import http.client
import itertools
import os
import random
import shutil
import signal
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.parse

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import bench  # noqa: E402  (processes, start line)

GOAL_P99_MS = 50.0


def parse_args():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--messages", type=int, default=100_000)
    parser.add_argument("--per-conversation", type=int, default=50)
    parser.add_argument("--queries", type=int, default=500)
    parser.add_argument("--limit", type=int, default=20, help="hits asked per search (the page's list size)")
    parser.add_argument("--seed", type=int, default=12)
    parser.add_argument("--time-limit", type=float, default=280)
    parser.add_argument("--parley-bin", default=os.environ.get("PARLEY_BIN",
                                                               os.path.join(bench.REPO, ".build/release/parley")))
    parser.add_argument("--out", default=os.path.join(HERE, "search-results.md"))
    parser.add_argument("--keep", action="store_true", help="keep the database (its folder is printed)")
    return parser.parse_args()


def start(processes, binary, workdir, name):
    env = {k: v for k, v in os.environ.items() if not k.startswith("PARLEY_")}
    argv = [binary, "--port", "0", "--db", os.path.join(workdir, "search.db"),
            "--public", os.path.join(bench.REPO, "Public")]
    process = processes.start(name, argv, env=env, stdout=subprocess.PIPE,
                              stderr=open(os.path.join(workdir, name + ".log"), "wb"))
    line = bench.read_line(process, bench.START_TIMEOUT_S, "parley (%s)" % name)
    return process, int(line.rsplit(":", 1)[1])


def vocabulary(rng, size=6000):
    """Pseudo-words of 4 to 10 letters, and some CJK words; drawn with Zipf-like weights."""
    words = set()
    while len(words) < size:
        words.add("".join(rng.choice("abcdefghijklmnopqrstuvwxyz") for _ in range(rng.randint(4, 10))))
    words = sorted(words)
    rng.shuffle(words)
    cjk = ["東京", "大阪", "検索", "会議", "資料", "予定", "天気", "旅行", "料理", "電車"]
    words += ["%s%s" % (a, b) for a in cjk for b in cjk]
    weights = [1.0 / (rank + 10) for rank in range(len(words))]
    return words, list(itertools.accumulate(weights))


def fill(path, args, rng, words, cumulative):
    """`args.messages` finished messages (user/assistant turns), `per_conversation` per conversation."""
    db = sqlite3.connect(path)
    # A bench database: no fsync, a large page cache while the index grows.
    db.execute("PRAGMA synchronous = OFF")
    db.execute("PRAGMA cache_size = -262144")
    now = int(time.time() * 1000) - 10_000_000
    stamp = now
    conversations = args.messages // args.per_conversation
    texts = []
    with db:
        for c in range(conversations):
            cid = "bench-c%06d" % c
            db.execute("INSERT INTO conversations (id, title, created_at, updated_at, owner_id) VALUES (?, ?, ?, ?, 'local')",
                       (cid, " ".join(rng.choices(words, cum_weights=cumulative, k=4)), stamp, stamp))
            parent = None
            for m in range(args.per_conversation):
                stamp += 1
                mid = "bench-m%07d" % (c * args.per_conversation + m)
                text = " ".join(rng.choices(words, cum_weights=cumulative, k=rng.randint(15, 80)))
                if len(texts) < 2000 and rng.random() < 0.05:
                    texts.append(text)
                db.execute("INSERT INTO messages (id, conversation_id, parent_id, role, content, status, html, "
                           "created_at, updated_at) VALUES (?, ?, ?, ?, ?, 'complete', '', ?, ?)",
                           (mid, cid, parent, "user" if m % 2 == 0 else "assistant", text, stamp, stamp))
                parent = mid
            db.execute("UPDATE conversations SET current_leaf_id = ? WHERE id = ?", (parent, cid))
    size = os.path.getsize(path)
    db.close()
    return texts, size


def queries(rng, count, words, texts):
    """A mix: single words over the whole frequency range, AND, phrases, prefixes, CJK."""
    out = []
    latin = [w for w in words if w.isascii()]
    cjk = [w for w in words if not w.isascii()]
    for _ in range(count):
        kind = rng.random()
        if kind < 0.5:
            out.append(("word", rng.choice(latin[:3000])))
        elif kind < 0.65:
            out.append(("and", "%s %s" % (rng.choice(latin[:300]), rng.choice(latin[:300]))))
        elif kind < 0.8:
            parts = rng.choice(texts).split()
            start = rng.randrange(max(1, len(parts) - 2))
            out.append(("phrase", '"%s"' % " ".join(parts[start:start + 2])))
        elif kind < 0.9:
            out.append(("prefix", rng.choice(latin[:3000])[:4] + "*"))
        else:
            out.append(("cjk", rng.choice(cjk)))
    return out


def main():
    args = parse_args()
    log = lambda text: print(text, file=sys.stderr, flush=True)
    if not os.access(args.parley_bin, os.X_OK):
        print("search bench: no parley binary at %s; run `swift build -c release` or set PARLEY_BIN"
              % args.parley_bin, file=sys.stderr)
        return 2

    def on_signal(number, _frame):
        raise KeyboardInterrupt("signal %d" % number)

    signal.signal(signal.SIGTERM, on_signal)
    signal.signal(signal.SIGALRM, on_signal)
    signal.alarm(int(args.time_limit))
    processes = bench.Processes()
    workdir = tempfile.mkdtemp(prefix="parley-search-bench-")
    rng = random.Random(args.seed)
    try:
        first, _ = start(processes, args.parley_bin, workdir, "migrate")
        bench.stop(first, signal.SIGTERM)
        words, weights = vocabulary(rng)
        began = time.monotonic()
        texts, size = fill(os.path.join(workdir, "search.db"), args, rng, words, weights)
        log("search bench: %d messages written and indexed in %.0f s (%.0f MB)"
            % (args.messages, time.monotonic() - began, size / 1e6))
        server, port = start(processes, args.parley_bin, workdir, "search")
        connection = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
        plan = queries(rng, args.queries + 20, words, texts)
        latencies, cpu, hits, by_kind = [], [], [], {}
        for index, (kind, query) in enumerate(plan):
            path = "/api/conversations?limit=%d&q=%s" % (args.limit, urllib.parse.quote(query))
            # The server's on-CPU time for this one query (all its threads): what the latency would be
            # on an idle machine, whatever else the shared machine runs meanwhile.
            before = sum(bench.cpu_ns_by_thread(server.pid).values())
            sent = time.perf_counter()
            connection.request("GET", path)
            response = connection.getresponse()
            body = response.read()
            elapsed = (time.perf_counter() - sent) * 1000
            used = (sum(bench.cpu_ns_by_thread(server.pid).values()) - before) / 1e6
            if response.status != 200:
                raise bench.BenchError("search %r answered %d: %s" % (query, response.status, body[:200]))
            if index >= 20:  # the first ones warm the caches
                latencies.append(elapsed)
                cpu.append(used)
                hits.append(body.count(b'"snippet"'))
                by_kind.setdefault(kind, []).append((elapsed, query))
        connection.close()
        for kind, times in sorted(by_kind.items()):
            times.sort()
            log("search bench: %-6s %3d queries, p50 %.1f ms, max %.1f ms (%s)"
                % (kind, len(times), times[len(times) // 2][0], times[-1][0], times[-1][1]))
        latencies.sort()
        cpu.sort()
        p99_of = lambda values: values[min(len(values) - 1, int(len(values) * 0.99))]
        p50, p99 = statistics.median(latencies), p99_of(latencies)
        load = os.getloadavg()[0]
        row = ("| search: %s messages, %d queries (words, AND, phrases, prefixes, CJK; %d hits asked, %.1f found on "
               "average) | latency p50 %.1f ms, p99 %.1f ms, max %.1f ms (load average %.1f on %d cores); server CPU "
               "per query p50 %.1f ms, p99 %.1f ms | p99 ≤ %.0f ms: %s |"
               % (format(args.messages, ","), len(latencies), args.limit, statistics.mean(hits), p50, p99,
                  latencies[-1], load, os.cpu_count() or 0, statistics.median(cpu), p99_of(cpu), GOAL_P99_MS,
                  "met" if p99 <= GOAL_P99_MS else "**not met**"))
        text = "| figure | value | goal |\n|---|---|---|\n" + row + "\n"
        print(text, end="")
        with open(args.out, "w") as handle:
            handle.write(text)
        return 0
    except bench.BenchError as error:
        print("search bench: %s" % error, file=sys.stderr)
        return 1
    except KeyboardInterrupt as interrupt:
        print("search bench: stopped (%s)" % (interrupt or "interrupted"), file=sys.stderr)
        return 1
    finally:
        signal.alarm(0)
        processes.stop_all()
        if args.keep:
            log("search bench: kept %s" % workdir)
        else:
            shutil.rmtree(workdir, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
