"""Parley sign-in timing bench (issue 17): a failed sign-in after a change of password cost.

Standard library only. Starts Parley in team mode with PARLEY_PASSWORD_MEMORY_KIB=65536 (the default),
creates a member and a disabled member through the admin API (their hashes made at that cost), stops it,
starts it again on the same database with 8192 KiB, and times failed sign-ins over one keep-alive
connection, interleaved: a wrong password for an account still at the old cost, an unknown name and the
disabled name. Before issue 17 the unknown and disabled names answered in about a tenth of the time.
Prints one Markdown table row (the ratios of medians against the 1.5x goal, both ways; also written to
bench/signin-results.md). Every process it starts is stopped at the end, also on error; the whole run
stops itself after --time-limit.
"""

import argparse
import http.client
import json
import os
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import bench  # noqa: E402  (processes, start line)

GOAL_RATIO = 1.5
ADMIN = ("ada", "correct horse battery")


def parse_args():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--old-kib", type=int, default=65_536, help="the cost the accounts are made at")
    parser.add_argument("--new-kib", type=int, default=8_192, help="the cost after the restart")
    parser.add_argument("--rounds", type=int, default=21, help="tries of each kind (after 2 warm-up rounds)")
    parser.add_argument("--time-limit", type=float, default=110)
    parser.add_argument("--parley-bin", default=os.environ.get("PARLEY_BIN",
                                                               os.path.join(bench.REPO, ".build/release/parley")))
    parser.add_argument("--out", default=os.path.join(HERE, "signin-results.md"))
    return parser.parse_args()


def start(processes, binary, workdir, name, memory_kib):
    env = {k: v for k, v in os.environ.items() if not k.startswith("PARLEY_")}
    env.update({"PARLEY_AUTH": "on", "PARLEY_ADMIN_USER": ADMIN[0], "PARLEY_ADMIN_PASSWORD": ADMIN[1],
                "PARLEY_PASSWORD_MEMORY_KIB": str(memory_kib), "PARLEY_LOGIN_ATTEMPTS": "100000"})
    argv = [binary, "--port", "0", "--db", os.path.join(workdir, "signin.db"),
            "--public", os.path.join(bench.REPO, "Public")]
    process = processes.start(name, argv, env=env, stdout=subprocess.PIPE,
                              stderr=open(os.path.join(workdir, name + ".log"), "wb"))
    line = bench.read_line(process, bench.START_TIMEOUT_S, "parley (%s)" % name)
    return process, int(line.rsplit(":", 1)[1])


def call(connection, method, path, body, headers=None):
    """`bench.api_call`, answering the session cookie where `Set-Cookie` has one."""
    status, answer, data = bench.api_call(connection, method, path, body, headers)
    return status, answer.get("set-cookie"), data


def make_accounts(port):
    """bob (enabled) and carol (disabled), made by the admin: their hashes at the first server's cost."""
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    status, cookie, body = call(connection, "POST", "/api/auth/login", {"username": ADMIN[0], "password": ADMIN[1]})
    if status != 200 or not cookie:
        raise bench.BenchError("the admin's sign-in answered %d: %s" % (status, body[:200]))
    session = {"Cookie": cookie.split(";")[0]}
    for username in ("bob", "carol"):
        status, _, body = call(connection, "POST", "/api/users",
                               {"username": username, "password": username + "'s password"}, session)
        if status != 201:
            raise bench.BenchError("creating %s answered %d: %s" % (username, status, body[:200]))
        if username == "carol":
            carol = json.loads(body)["id"]
    status, _, body = call(connection, "PATCH", "/api/users/" + carol, {"disabled": True}, session)
    if status != 200:
        raise bench.BenchError("disabling carol answered %d: %s" % (status, body[:200]))
    connection.close()


def failed_sign_in(connection, username):
    started = time.perf_counter()
    status, _, body = call(connection, "POST", "/api/auth/login", {"username": username, "password": "not it"})
    elapsed = (time.perf_counter() - started) * 1000
    if status != 401:
        raise bench.BenchError("a wrong sign-in as %s answered %d: %s" % (username, status, body[:200]))
    return elapsed


def main():
    args = parse_args()
    log = lambda text: print(text, file=sys.stderr, flush=True)
    if not os.access(args.parley_bin, os.X_OK):
        print("sign-in bench: no parley binary at %s; run `swift build -c release` or set PARLEY_BIN"
              % args.parley_bin, file=sys.stderr)
        return 2

    def on_signal(number, _frame):
        raise KeyboardInterrupt("signal %d" % number)

    signal.signal(signal.SIGTERM, on_signal)
    signal.signal(signal.SIGALRM, on_signal)
    signal.alarm(int(args.time_limit))
    processes = bench.Processes()
    workdir = tempfile.mkdtemp(prefix="parley-signin-bench-")
    try:
        first, port = start(processes, args.parley_bin, workdir, "old-cost", args.old_kib)
        make_accounts(port)
        bench.stop(first, signal.SIGTERM)
        began = time.monotonic()
        _, port = start(processes, args.parley_bin, workdir, "new-cost", args.new_kib)
        log("sign-in bench: restarted at %d KiB in %.1f s (it times each stored cost once at start)"
            % (args.new_kib, time.monotonic() - began))
        connection = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
        kinds = {"wrong password": "bob", "unknown name": "nobody-here", "disabled name": "carol"}
        times = {kind: [] for kind in kinds}
        for index in range(args.rounds + 2):
            for kind, username in kinds.items():
                elapsed = failed_sign_in(connection, username)
                if index >= 2:  # the first rounds warm the connection and the caches
                    times[kind].append(elapsed)
        connection.close()
        medians = {kind: statistics.median(values) for kind, values in times.items()}
        wrong = medians["wrong password"]
        ratios = {kind: wrong / medians[kind] for kind in ("unknown name", "disabled name")}
        worst = max(max(ratio, 1 / ratio) for ratio in ratios.values())
        row = ("| sign-in after a password cost change (accounts made at %s KiB, restarted at %s KiB), %d tries "
               "each | failed sign-in p50: wrong password %.1f ms, unknown name %.1f ms, disabled name %.1f ms; "
               "wrong password / unknown %.2f×, / disabled %.2f× | ratio of medians ≤ %.1f× both ways: %s |"
               % (format(args.old_kib, ","), format(args.new_kib, ","), args.rounds, wrong, medians["unknown name"],
                  medians["disabled name"], ratios["unknown name"], ratios["disabled name"], GOAL_RATIO,
                  "met" if worst <= GOAL_RATIO else "**not met**"))
        text = "| figure | value | goal |\n|---|---|---|\n" + row + "\n"
        print(text, end="")
        with open(args.out, "w") as handle:
            handle.write(text)
        return 0
    except bench.BenchError as error:
        print("sign-in bench: %s" % error, file=sys.stderr)
        return 1
    except KeyboardInterrupt as interrupt:
        print("sign-in bench: stopped (%s)" % (interrupt or "interrupted"), file=sys.stderr)
        return 1
    finally:
        signal.alarm(0)
        processes.stop_all()
        shutil.rmtree(workdir, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
