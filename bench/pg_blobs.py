"""File bytes on PostgreSQL (issue 24): `bytea` chunks (what PostgresBlobs stores) against one large
object per file, measured side by side on one throwaway PostgreSQL 15 (scripts/postgres-test-server.sh,
in a temp dir, loopback only), all on this machine.

Each layout, --reps times, alternated, medians (psql's \\timing of each statement, so the client's
transfer of the bytes read is counted, as a range request would send them on):
  write   a --mb MB file of random bytes, 256 KiB at a time (PostgresBlobs' chunk size; a large object
          written with lo_put at the same offsets), one transaction
  range   1 MiB from the middle (chunks: the 4-5 rows that hold it, cut; large object: lo_get)
  whole   the whole file read back
  delete  the file gone (chunks: DELETE of its rows; large object: lo_unlink)

  python3 bench/pg_blobs.py [--mb 20 --reps 5]
"""

import argparse
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)
PSQL = "/usr/lib/postgresql/15/bin/psql"
CHUNK = 256 * 1024
OPERATIONS = ("write", "range", "whole", "delete")


def script(mb, rep):
    """One round of both layouts; every timed statement is marked by the SELECT before it."""
    chunks = mb * 1024 * 1024 // CHUNK
    middle = mb * 1024 * 1024 // 2
    first, last = middle // CHUNK, (middle + 1024 * 1024 - 1) // CHUNK
    return f"""
SELECT 'chunks write';
BEGIN;
INSERT INTO chunks (blob_id, seq, bytes) SELECT {rep}, g, (SELECT b FROM source WHERE k = g % 8) FROM generate_series(0, {chunks - 1}) g;
COMMIT;
SELECT 'chunks range';
SELECT length(substring(string_agg(bytes, ''::bytea ORDER BY seq) FROM {middle - first * CHUNK + 1} FOR 1048576))
FROM chunks WHERE blob_id = {rep} AND seq BETWEEN {first} AND {last};
SELECT 'chunks whole';
SELECT sum(length(md5(bytes))) FROM chunks WHERE blob_id = {rep};
SELECT 'chunks delete';
DELETE FROM chunks WHERE blob_id = {rep};
SELECT 'large object write';
BEGIN;
SELECT lo_create({1000 + rep}) \\g /dev/null
SELECT count(lo_put({1000 + rep}, g * {CHUNK}, (SELECT b FROM source WHERE k = g % 8))) FROM generate_series(0, {chunks - 1}) g;
COMMIT;
SELECT 'large object range';
SELECT length(lo_get({1000 + rep}, {middle}, 1048576));
SELECT 'large object whole';
SELECT length(md5(lo_get({1000 + rep})));
SELECT 'large object delete';
SELECT lo_unlink({1000 + rep});
"""


SETUP = """
CREATE TABLE chunks (blob_id BIGINT, seq BIGINT, bytes BYTEA NOT NULL, PRIMARY KEY (blob_id, seq));
ALTER TABLE chunks ALTER COLUMN bytes SET STORAGE EXTERNAL;
CREATE TABLE source (k INT PRIMARY KEY, b BYTEA);
INSERT INTO source SELECT k, (SELECT decode(string_agg(md5(random()::text || k || g), ''), 'hex')
                              FROM generate_series(1, %d) g) FROM generate_series(0, 7) k;
""" % (CHUNK // 16)


def run(url, text):
    """Runs `text` in one psql session with \\timing; returns {label: ms} for the marked statements."""
    result = subprocess.run([PSQL, url, "-X", "-q", "-A", "-t", "-v", "ON_ERROR_STOP=1"], input="\\timing on\n" + text,
                            capture_output=True, text=True, timeout=600, check=True)
    times, label, lines = {}, None, result.stdout.splitlines()
    for index, line in enumerate(lines):
        if line.startswith("chunks ") or line.startswith("large object "):
            label = line
            times[label] = 0.0
        elif label and line.startswith("Time: ") and not lines[index - 1].startswith(("chunks ", "large object ")):
            times[label] += float(re.match(r"Time: ([0-9.]+) ms", line).group(1))
    return times


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mb", type=int, default=20)
    parser.add_argument("--reps", type=int, default=5)
    args = parser.parse_args()
    workdir = tempfile.mkdtemp(prefix="parley-pg-blobs-", dir="/tmp")
    os.chmod(workdir, 0o755)
    server = os.path.join(REPO, "scripts", "postgres-test-server.sh")
    try:
        url = subprocess.run([server, "start", os.path.join(workdir, "pg")], capture_output=True, text=True,
                             timeout=120, check=True).stdout.strip().splitlines()[-1]
        run(url, SETUP)
        samples = {}
        for rep in range(args.reps):
            for label, ms in run(url, script(args.mb, rep + 1)).items():
                samples.setdefault(label, []).append(ms)
        lines = ["", "File bytes on PostgreSQL (bench/pg_blobs.py): one %d MB file, 256 KiB at a time, medians of %d, "
                 "ms (psql's timing, client transfer included)" % (args.mb, args.reps), "",
                 "| layout | write | 1 MiB range from the middle | whole file | delete |", "|---|---|---|---|---|"]
        for layout in ("chunks", "large object"):
            lines.append("| %s | %s |" % ("bytea chunks (PostgresBlobs)" if layout == "chunks" else "one large object",
                                          " | ".join("%.1f" % statistics.median(samples["%s %s" % (layout, op)])
                                                     for op in OPERATIONS)))
        print("\n".join(lines))
    finally:
        subprocess.run([server, "stop", os.path.join(workdir, "pg")], capture_output=True, timeout=120)
        shutil.rmtree(workdir, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
