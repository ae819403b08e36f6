"""Upload throughput and memory (issue 21, "Tests and bench"), all on 127.0.0.1.

Starts the given parley binary (temp database, upload limits raised for the bench) and an nginx that
reads each request body into a file (client_body_in_file_only, proxy_request_buffering on: the
whole body is on disk before nginx proxies it to a second server block that answers 204). Then:

  (a) --sequential uploads (distinct bytes each) of one --mb MB file to both; median MB/s, ratio
      Parley/nginx (goal >= 0.5);
  (b) --concurrent uploads of the same size at once to Parley while its RSS is read from
      /proc/PID/status every 50 ms: idle, peak, peak - idle (goal < 100 MiB). The media workers
      (`parley-media-worker` children) are separate processes; their summed peak is shown apart.

The file is a UTF-8 CSV document (Parley's processing: SHA-256 and a UTF-8 check while the body
arrives, then a copy into its file store, on the disk before the answer), each body made distinct by
its first line (Parley answers 200, not 201, to bytes it
already holds). Python standard library only; every process started is stopped and the temp
directory removed on exit.

  python3 bench/uploads.py .build/release/parley [--sequential 5 --concurrent 20 --mb 20]
"""

import argparse
import http.client
import os
import platform
import re
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)
START_TIMEOUT_S = 30
RESULTS = os.path.join(HERE, "upload-results.md")

NGINX_CONF = """\
daemon off;
master_process on;
worker_processes 1;
pid {dir}/nginx.pid;
error_log {dir}/nginx-error.log warn;
events {{ worker_connections 1024; }}
http {{
    access_log off;
    client_body_temp_path {dir}/client_body;
    proxy_temp_path {dir}/proxy;
    fastcgi_temp_path {dir}/fastcgi;
    uwsgi_temp_path {dir}/uwsgi;
    scgi_temp_path {dir}/scgi;
    server {{
        listen 127.0.0.1:{port};
        location /upload {{
            client_max_body_size 64m;
            client_body_in_file_only on;
            client_body_buffer_size 128k;
            proxy_request_buffering on;
            proxy_http_version 1.1;
            proxy_set_header Connection "";
            proxy_pass http://127.0.0.1:{sink}/;
        }}
    }}
    server {{
        listen 127.0.0.1:{sink};
        location / {{
            client_max_body_size 64m;
            return 204;
        }}
    }}
}}
"""


class BenchError(Exception):
    pass


def free_port():
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def port_open(port):
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=0.5):
            return True
    except OSError:
        return False


def stop(process, first_signal=signal.SIGTERM):
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


def tail_of(path, lines=15):
    try:
        with open(path, errors="replace") as handle:
            return "".join(handle.readlines()[-lines:])
    except OSError:
        return "(no log)"


def rss_mib(pid):
    try:
        with open("/proc/%d/status" % pid) as status:
            for line in status:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1]) / 1024.0
    except OSError:
        pass
    return 0.0


def children_of(pid):
    """Every process whose parent is `pid` (the workers are spawned from several threads, so the
    main thread's /proc children list is not enough)."""
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


def start_parley(binary, workdir, mb, concurrent):
    env = {k: v for k, v in os.environ.items() if not k.startswith("PARLEY_")}
    env.update({
        "PARLEY_MAX_FILE_BYTES": str(32 << 20),
        "PARLEY_MAX_USER_FILE_BYTES": str(64 << 30),
        "PARLEY_MAX_UPLOADS": str(max(32, concurrent + 4)),
        # 20 files at once with 2 workers: the rest must wait in the queue, not get 503.
        "PARLEY_MEDIA_QUEUE": str(max(16, concurrent + 4)),
    })
    log_path = os.path.join(workdir, "parley.log")
    argv = [binary, "--port", "0", "--db", os.path.join(workdir, "parley.db"), "--public", os.path.join(REPO, "Public")]
    process = subprocess.Popen(argv, env=env, stdout=subprocess.PIPE, stderr=open(log_path, "wb"),
                               start_new_session=True)
    line = process.stdout.readline().decode().strip()
    match = re.fullmatch(r"listening on http://[^:]+:(\d+)", line)
    if not match:
        stop(process)
        raise BenchError("parley printed %r; its log ends with:\n%s" % (line, tail_of(log_path)))
    return process, int(match.group(1))


def start_nginx(nginx, workdir):
    nginx_dir = os.path.join(workdir, "nginx")
    os.makedirs(nginx_dir, exist_ok=True)
    os.chmod(workdir, 0o755)
    os.chmod(nginx_dir, 0o777)  # the worker may run as nobody
    for _ in range(5):
        port, sink = free_port(), free_port()
        conf = os.path.join(nginx_dir, "nginx.conf")
        with open(conf, "w") as handle:
            handle.write(NGINX_CONF.format(dir=nginx_dir, port=port, sink=sink))
        log = os.path.join(nginx_dir, "stderr.log")
        process = subprocess.Popen([nginx, "-p", nginx_dir, "-c", conf, "-e", os.path.join(nginx_dir, "nginx-error.log")],
                                   stdout=subprocess.DEVNULL, stderr=open(log, "wb"), start_new_session=True)
        end = time.monotonic() + START_TIMEOUT_S
        while time.monotonic() < end and process.poll() is None:
            if port_open(port) and port_open(sink):
                return process, port, os.path.join(nginx_dir, "client_body")
            time.sleep(0.05)
        stop(process, signal.SIGQUIT)
        message = tail_of(log) + tail_of(os.path.join(nginx_dir, "nginx-error.log"))
        if "Address already in use" not in message:
            raise BenchError("nginx did not start:\n%s" % message)
    raise BenchError("nginx could not bind a free port")


def csv_body(size):
    """`size` bytes of UTF-8 CSV (ASCII and a few accented names), ending in a newline."""
    names = ["Zoë", "Łukasz", "Ana", "Björn", "Chloé", "Dmitri", "Émile", "Jürgen"]
    lines = ["id,name,city,amount,note\n"]
    total, row = len(lines[0].encode()), 0
    while total < size:
        row += 1
        line = "%d,%s,%s,%d.%02d,row %d of the bench file\n" % (
            row, names[row % len(names)], ["Paris", "Kraków", "Malmö", "Zürich"][row % 4], row * 37 % 100000, row % 100, row)
        lines.append(line)
        total += len(line.encode())
    data = "".join(lines).encode()
    cut = data.rfind(b"\n", 0, size - 1)  # whole lines only (no split UTF-8 sequence), then ASCII padding
    return data[:cut + 1] + b"#" * (size - cut - 2) + b"\n"


class Upload:
    """One upload: a distinct first line, then the shared body (sent from memory, never copied)."""

    def __init__(self, port, path, tag, body):
        self.port, self.path, self.prefix, self.body = port, path, ("# upload %s\n" % tag).encode(), body
        self.status, self.seconds, self.error = None, None, None

    @property
    def size(self):
        return len(self.prefix) + len(self.body)

    def run(self):
        start = time.monotonic()
        try:
            connection = http.client.HTTPConnection("127.0.0.1", self.port, timeout=120)
            connection.putrequest("POST", self.path)
            connection.putheader("Content-Type", "text/csv")
            connection.putheader("Content-Length", str(self.size))
            connection.endheaders()
            connection.send(self.prefix)
            view = memoryview(self.body)
            for offset in range(0, len(view), 1 << 20):
                connection.send(view[offset:offset + (1 << 20)])
            response = connection.getresponse()
            answer = response.read()
            self.status = response.status
            if self.status not in (200, 201, 204):
                self.error = "%d %s" % (self.status, answer[:200].decode(errors="replace"))
            connection.close()
        except (OSError, http.client.HTTPException) as error:
            self.error = str(error)
        self.seconds = time.monotonic() - start

    def check(self, expected, what):
        if self.error or self.status not in expected:
            raise BenchError("%s upload failed: %s" % (what, self.error or self.status))


def sequential(port, path, body, count, expected, what, tag):
    rates = []
    for index in range(count):
        upload = Upload(port, path, "%s-%d-%d" % (tag, index, time.time_ns()), body)
        upload.run()
        upload.check(expected, what)
        rates.append(upload.size / 1e6 / upload.seconds)
    return rates


def concurrent(port, body, count, pid):
    uploads = [Upload(port, "/api/files?filename=bench-%d.csv" % i, "concurrent-%d-%d" % (i, time.time_ns()), body)
               for i in range(count)]
    peak, worker_peak, samples = [0.0], [0.0], [0]
    done = threading.Event()

    def sample():
        while not done.is_set():
            peak[0] = max(peak[0], rss_mib(pid))
            worker_peak[0] = max(worker_peak[0], sum(rss_mib(child) for child in children_of(pid)))
            samples[0] += 1
            done.wait(0.05)

    sampler = threading.Thread(target=sample, daemon=True)
    sampler.start()
    threads = [threading.Thread(target=upload.run, daemon=True) for upload in uploads]
    start = time.monotonic()
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(150)
    wall = time.monotonic() - start
    done.set()
    sampler.join()
    for upload in uploads:
        upload.check((201,), "concurrent Parley")
    return peak[0], worker_peak[0], wall, samples[0], sum(u.size for u in uploads)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("binary")
    parser.add_argument("--sequential", type=int, default=5)
    parser.add_argument("--concurrent", type=int, default=20)
    parser.add_argument("--mb", type=int, default=20)
    args = parser.parse_args()
    nginx = shutil.which("nginx") or ("/usr/sbin/nginx" if os.access("/usr/sbin/nginx", os.X_OK) else None)
    if not nginx:
        sys.exit("bench/uploads.py: nginx is missing (apt-get install -y nginx-light)")

    workdir = tempfile.mkdtemp(prefix="parley-uploads-")
    processes = []
    try:
        parley, port = start_parley(args.binary, workdir, args.mb, args.concurrent)
        processes.append((parley, signal.SIGTERM))
        server, nginx_port, body_dir = start_nginx(nginx, workdir)
        processes.append((server, signal.SIGQUIT))
        body = csv_body(args.mb * 1_000_000)

        # One warm-up each (page cache, first worker start), then alternate so load drifts hit both.
        sequential(port, "/api/files?filename=warm.csv", body, 1, (201,), "Parley", "warm")
        sequential(nginx_port, "/upload", body, 1, (204,), "nginx", "warm")
        parley_rates, nginx_rates = [], []
        for index in range(args.sequential):
            parley_rates += sequential(port, "/api/files?filename=bench.csv", body, 1, (201,), "Parley", "seq%d" % index)
            nginx_rates += sequential(nginx_port, "/upload", body, 1, (204,), "nginx", "seq%d" % index)
        stored = len(os.listdir(body_dir)) if os.path.isdir(body_dir) else 0
        if stored < args.sequential:
            raise BenchError("nginx kept %d body files, expected at least %d" % (stored, args.sequential))

        time.sleep(1)
        idle = rss_mib(parley.pid)
        peak, worker_peak, wall, samples, total = concurrent(port, body, args.concurrent, parley.pid)
        time.sleep(1)
        after = rss_mib(parley.pid)
    finally:
        for process, first in reversed(processes):
            stop(process, first)
        shutil.rmtree(workdir, ignore_errors=True)

    p_med, n_med = statistics.median(parley_rates), statistics.median(nginx_rates)
    with open("/proc/loadavg") as handle:
        load = " ".join(handle.read().split()[:3])
    lines = [
        "## Uploads (issue 21)",
        "",
        "%d MB UTF-8 CSV document (text/csv: Parley hashes it and checks UTF-8 as it arrives, then copies it "
        "into its file store and syncs it to the disk), distinct bytes per upload, loopback; nginx %s keeps each body in a file "
        "(client_body_in_file_only on) before proxying to a 204. %d sequential uploads each after one warm-up; "
        "%d cores, load average %s; Python %s." % (args.mb, nginx_version(nginx), args.sequential, os.cpu_count(),
                                                   load, platform.python_version()),
        "",
        "| figure | Parley | nginx | ratio | goal |",
        "|:--|--:|--:|--:|:--|",
        "| sequential %d MB upload, median MB/s (min–max) | %.0f (%.0f–%.0f) | %.0f (%.0f–%.0f) | %.2f× | ≥ 0.5× nginx |" % (
            args.mb, p_med, min(parley_rates), max(parley_rates), n_med, min(nginx_rates), max(nginx_rates), p_med / n_med),
        "| RSS idle, MiB | %.1f | | | |" % idle,
        "| RSS peak during %d concurrent %d MB uploads, MiB (%d samples, 50 ms) | %.1f | | | |" % (
            args.concurrent, args.mb, samples, peak),
        "| **RSS peak − idle, MiB** | **%.1f** | | | < 100 MiB |" % (peak - idle),
        "| media workers' summed peak RSS (separate processes), MiB | %.1f | | | |" % worker_peak,
        "| RSS 1 s after, MiB | %.1f | | | |" % after,
        "| %d concurrent uploads, wall s (aggregate MB/s) | %.1f (%.0f) | | | |" % (args.concurrent, wall, total / 1e6 / wall),
        "",
    ]
    text = "\n".join(lines)
    print(text)
    with open(RESULTS, "w") as handle:
        handle.write(text + "\n")
    return 0


def nginx_version(nginx):
    try:
        out = subprocess.run([nginx, "-v"], capture_output=True, text=True, timeout=10).stderr
        match = re.search(r"nginx/(\S+)", out)
        return match.group(1) if match else "?"
    except (OSError, subprocess.TimeoutExpired):
        return "?"


if __name__ == "__main__":
    try:
        sys.exit(main())
    except BenchError as error:
        sys.exit("bench/uploads.py: %s" % error)
