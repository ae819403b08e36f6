"""Parley search bench (issues 12 and 17): full-text search over 100,000 messages, p99 against the 50 ms
goal, and what one member's search costs when another user has 30,000 matching messages.

Standard library only. Starts Parley on an empty database and imports the messages through
`POST /api/import` (the index is Parley's own tokenizer, `parley_owned`, which only Parley's
connections know, so the file cannot be filled from outside), then times `GET /api/conversations?q=...`
over one keep-alive connection: single words of every frequency, two-word AND queries, phrases, prefixes
and CJK. Then, in team mode, a member with no documents searches a phrase another user wrote 30,000
times and a word nobody wrote: the ratio of the medians (goal ≤ 2×) says whether the search walks
other users' rows. Prints Markdown table rows (also written to bench/search-results.md). Every process
it starts is stopped at the end, also on error; the whole run stops itself after --time-limit.
"""

import argparse
import http.client
import itertools
import os
import random
import shutil
import json
import signal
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
GOAL_ISOLATION_RATIO = 2.0
# Import documents are sent in bodies of up to this size (PARLEY_MAX_BODY_BYTES of the bench's server).
IMPORT_BODY_BYTES = 8 << 20


def parse_args():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--messages", type=int, default=100_000)
    parser.add_argument("--per-conversation", type=int, default=50)
    parser.add_argument("--queries", type=int, default=500)
    parser.add_argument("--limit", type=int, default=20, help="hits asked per search (the page's list size)")
    parser.add_argument("--seed", type=int, default=12)
    parser.add_argument("--other-user-matches", type=int, default=30_000,
                        help="another user's messages matching the member's phrase (issue 17)")
    parser.add_argument("--isolation-queries", type=int, default=200)
    parser.add_argument("--isolation-only", action="store_true",
                        help="only the isolation figure (e.g. against an older binary)")
    parser.add_argument("--time-limit", type=float, default=280)
    parser.add_argument("--parley-bin", default=os.environ.get("PARLEY_BIN",
                                                               os.path.join(bench.REPO, ".build/release/parley")))
    parser.add_argument("--out", default=os.path.join(HERE, "search-results.md"))
    parser.add_argument("--keep", action="store_true", help="keep the database (its folder is printed)")
    return parser.parse_args()


def start(processes, binary, workdir, name, extra_env=None, db="search.db"):
    env = {k: v for k, v in os.environ.items() if not k.startswith("PARLEY_")}
    env["PARLEY_MAX_BODY_BYTES"] = str(IMPORT_BODY_BYTES)
    env.update(extra_env or {})
    argv = [binary, "--port", "0", "--db", os.path.join(workdir, db),
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


def stamp_iso(milliseconds):
    seconds, ms = divmod(milliseconds, 1000)
    return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(seconds)) + ".%03dZ" % ms


def import_all(connection, conversations, headers=None):
    """Imports `conversations` (export-format dicts) in bodies under IMPORT_BODY_BYTES."""
    batch, size = [], 0
    def send():
        body = json.dumps({"parley_export": 1, "conversations": batch}).encode()
        status, _, answer = bench.api_call(connection, "POST", "/api/import", body, headers)
        if status != 201:
            raise bench.BenchError("import answered %d: %s" % (status, answer[:300]))
    for conversation in conversations:
        piece = len(json.dumps(conversation))
        if batch and size + piece > IMPORT_BODY_BYTES - 4096:
            send()
            batch, size = [], 0
        batch.append(conversation)
        size += piece
    if batch:
        send()


def conversation_document(title, texts, stamp):
    """An export-format conversation whose messages are `texts`, one chain of user/assistant turns."""
    messages, parent = [], None
    for index, text in enumerate(texts):
        mid = "m%d" % index
        at = stamp_iso(stamp + index)
        messages.append({"id": mid, "parent_id": parent, "role": "user" if index % 2 == 0 else "assistant",
                         "content": text, "reasoning": "", "status": "complete", "finish_reason": None,
                         "model": None, "usage": None, "error": None, "created_at": at, "updated_at": at})
        parent = mid
    at = stamp_iso(stamp)
    return {"title": title, "model": None, "system_prompt": None, "pinned": False, "archived": False,
            "current_leaf_id": parent, "created_at": at, "updated_at": at, "messages": messages}


def fill(connection, args, rng, words, cumulative):
    """`args.messages` finished messages (user/assistant turns), `per_conversation` per conversation,
    imported through the API."""
    stamp = int(time.time() * 1000) - 10_000_000
    texts, documents = [], []
    for c in range(args.messages // args.per_conversation):
        turns = []
        for _ in range(args.per_conversation):
            text = " ".join(rng.choices(words, cum_weights=cumulative, k=rng.randint(15, 80)))
            if len(texts) < 2000 and rng.random() < 0.05:
                texts.append(text)
            turns.append(text)
        documents.append(conversation_document(" ".join(rng.choices(words, cum_weights=cumulative, k=4)), turns, stamp))
        stamp += args.per_conversation
    import_all(connection, documents)
    return texts


def timed_search(connection, query, headers, runs):
    """Median milliseconds of `runs` searches for `query` (after 10 to warm up), and its hit count."""
    path = "/api/conversations?limit=20&q=%s" % urllib.parse.quote(query)
    times, hits = [], 0
    for index in range(runs + 10):
        sent = time.perf_counter()
        status, _, body = bench.api_call(connection, "GET", path, headers=headers)
        elapsed = (time.perf_counter() - sent) * 1000
        if status != 200:
            raise bench.BenchError("search %r answered %d: %s" % (query, status, body[:200]))
        if index >= 10:
            times.append(elapsed)
        hits = body.count(b'"snippet"')
    return statistics.median(times), hits


def isolation(processes, args, workdir, log):
    """Issue 17: a member with no documents searches a phrase another user wrote N times, and a word
    nobody wrote; returns the table row."""
    password = "bench-password-1"
    server, port = start(processes, args.parley_bin, workdir, "isolation", db="isolation.db", extra_env={
        "PARLEY_AUTH": "on", "PARLEY_ADMIN_USER": "root", "PARLEY_ADMIN_PASSWORD": password,
        "PARLEY_PASSWORD_MEMORY_KIB": "8192"})
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=60)

    def sign_in(username):
        status, headers, body = bench.api_call(connection, "POST", "/api/auth/login",
                                               {"username": username, "password": password})
        if status != 200:
            raise bench.BenchError("sign-in of %s answered %d: %s" % (username, status, body[:200]))
        cookie = headers["set-cookie"].split(";", 1)[0]
        return {"Cookie": cookie}

    root = sign_in("root")
    for username in ("victim", "member"):
        status, _, body = bench.api_call(connection, "POST", "/api/users",
                                         {"username": username, "password": password}, root)
        if status != 201:
            raise bench.BenchError("creating %s answered %d: %s" % (username, status, body[:200]))
    victim, member = sign_in("victim"), sign_in("member")
    stamp = int(time.time() * 1000) - 10_000_000
    per = 100
    documents = [conversation_document("notes %d" % c, ["the quick brown fox number %d" % (c * per + m) for m in range(per)],
                                       stamp + c * per)
                 for c in range(args.other_user_matches // per)]
    import_all(connection, documents, victim)
    log("search bench: the other user has %d messages with 'quick brown'" % args.other_user_matches)
    phrase, phrase_hits = timed_search(connection, "quick brown", member, args.isolation_queries)
    absent, absent_hits = timed_search(connection, "zygomatic", member, args.isolation_queries)
    own, own_hits = timed_search(connection, "quick brown", victim, max(args.isolation_queries // 10, 10))
    connection.close()
    if phrase_hits or absent_hits:
        raise bench.BenchError("the member found another user's conversations (%d, %d hits)" % (phrase_hits, absent_hits))
    ratio = phrase / absent if absent > 0 else float("inf")
    return ("| search isolation: a member with no documents searches a phrase another user wrote %s times, "
            "against a word nobody wrote (%d queries each; the other user's own search of it: median %.1f ms, %d hits) "
            "| median %.2f ms against %.2f ms: **%.2f×** | ≤ %.0f×: %s |"
            % (format(args.other_user_matches, ","), args.isolation_queries, own, own_hits, phrase, absent, ratio,
               GOAL_ISOLATION_RATIO, "met" if ratio <= GOAL_ISOLATION_RATIO else "**not met**"))


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
        if args.isolation_only:
            text = "| figure | value | goal |\n|---|---|---|\n" + isolation(processes, args, workdir, log) + "\n"
            print(text, end="")
            return 0
        server, port = start(processes, args.parley_bin, workdir, "search")
        connection = http.client.HTTPConnection("127.0.0.1", port, timeout=120)
        words, weights = vocabulary(rng)
        began = time.monotonic()
        texts = fill(connection, args, rng, words, weights)
        size = sum(os.path.getsize(os.path.join(workdir, name)) for name in os.listdir(workdir)
                   if name.startswith("search.db"))
        log("search bench: %d messages imported and indexed in %.0f s (%.0f MB)"
            % (args.messages, time.monotonic() - began, size / 1e6))
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
        bench.stop(server, signal.SIGTERM)
        text = "| figure | value | goal |\n|---|---|---|\n" + row + "\n" + isolation(processes, args, workdir, log) + "\n"
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
