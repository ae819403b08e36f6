"""Where a Parley server's CPU went in a `perf record --call-graph dwarf` file (bench.py --perf-dir).

Usage: python3 bench/perf_summary.py FILE.data [FILE.data ...] [--top N]

Prints, per file (only the server's samples when the name ends in -pidN.data, as bench.py --perf-dir
writes them): the samples; the share of samples whose stack holds each category (inclusive: a
sample counts once per category, so the shares add up to more than 100%); the share of each leaf
library (self); and the top N leaf symbols, demangled with `swift demangle` when it is on the PATH.
Categories are matched on the symbol and library names of every frame (CATEGORIES below).
"""

import argparse
import collections
import re
import shutil
import subprocess
import sys

# (name, regular expression over "symbol library" of a frame); the first match per frame counts.
CATEGORIES = [
    ("SQLite FTS5 (search index: Parley's owned trigram tokenizer, fts5 symbols)", r"(?i)fts5|trigram|"
     r"11ParleyStore8tokenize33_|11ParleyStore7forward33_"),  # OwnedTrigramTokenizer.swift's C callbacks
    ("SQLite (all)", r"libsqlite3|sqlite3"),
    ("curl (upstream)", r"libcurl|curl_"),
    ("libmicrohttpd", r"libmicrohttpd|MHD_"),
    ("JSON decoding (Foundation)", r"JSONDecoder|JSONScanner|JSONDecod|JSONMap|JSONParser|JSONSerialization"),
    ("JSON encoding", r"JSONEncoder|JSONWriter|JSONEncod|JSONBuilder|JSONText"),
    ("title requests (ConversationTitler)", r"ConversationTitler|Titler"),
    ("hardening checks (framing, origin, connection registry, quotas)", r"RequestFraming|OriginPolicy|"
     r"ConnectionRegistry|AddressRange|ParleyQuotas|RequestContext"),
    ("SQLite store (ParleyStore)", r"ParleyStore|11ParleyStore"),
    ("Markdown", r"cmark|Markdown"),
    ("Swift retain/release", r"swift_retain|swift_release|swift_bridgeObjectRe"),
    ("Swift generic metadata lookups", r"getGenericMetadata|MetadataCache|GenericCacheEntry|getWitnessTable|"
     r"instantiateConcreteType|swift_getTypeByMangledName"),
    ("Swift concurrency (tasks, actors, executors)", r"swift_task|swift_job|libswift_Concurrency|"
     r"swift_continuation|swift_actor|dispatch"),
    ("malloc/free", r"malloc|free|_int_|cfree|realloc"),
    ("kernel", r"\[kernel"),
]


def frames(perf_file, pid=None):
    """Yields each sample as a list of (symbol, library) from leaf to root (only process `pid`'s if given)."""
    argv = ["perf", "script", "-i", perf_file, "-F", "ip,sym,dso", "--no-inline"]
    if pid:
        argv += ["--pid", str(pid)]
    process = subprocess.Popen(argv,
                               stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True, errors="replace")
    sample = []
    for line in process.stdout:
        line = line.strip()
        if not line:
            if sample:
                yield sample
            sample = []
            continue
        match = re.match(r"[0-9a-f]+\s+(.*?)\s+\((.*)\)$", line)
        if match:
            sample.append((match.group(1), match.group(2)))
    if sample:
        yield sample
    process.wait()


def demangle(names):
    tool = shutil.which("swift-demangle") or shutil.which("swift")
    if not tool or not names:
        return {n: n for n in names}
    argv = [tool, "--simplified", "--compact"] if tool.endswith("swift-demangle") else \
        [tool, "demangle", "--simplified", "--compact"]
    try:
        out = subprocess.run(argv, input="\n".join(names), capture_output=True, text=True, timeout=60).stdout
        lines = out.splitlines()
        if len(lines) == len(names):
            return dict(zip(names, lines))
    except (OSError, subprocess.SubprocessError):
        pass
    return {n: n for n in names}


def summarize(perf_file, top):
    compiled = [(name, re.compile(expr)) for name, expr in CATEGORIES]
    pid = re.search(r"-pid(\d+)\.data$", perf_file)  # bench.py --perf-dir records system-wide
    total = 0
    sqlite_callers = collections.Counter()
    inclusive = collections.Counter()
    leaf_lib = collections.Counter()
    leaf_sym = collections.Counter()
    for sample in frames(perf_file, pid.group(1) if pid else None):
        total += 1
        if any("libsqlite3" in library for _, library in sample):
            caller = next((symbol for symbol, _ in sample if "ParleyStore" in symbol), "(no ParleyStore frame)")
            sqlite_callers[caller.split("+0x")[0]] += 1
        symbol, library = sample[0]
        leaf_lib[library.rsplit("/", 1)[-1]] += 1
        leaf_sym[symbol.split("+0x")[0]] += 1
        seen = set()
        for symbol, library in sample:
            text = "%s %s" % (symbol, library)
            for name, expr in compiled:
                if name not in seen and expr.search(text):
                    seen.add(name)
        inclusive.update(seen)
    print("## %s: %d samples" % (perf_file, total))
    if not total:
        return
    print("\nInclusive (stack holds it):")
    for name, _ in CATEGORIES:
        print("  %5.1f%%  %s" % (100.0 * inclusive[name] / total, name))
    print("\nSelf, by library:")
    for library, count in leaf_lib.most_common(10):
        print("  %5.1f%%  %s" % (100.0 * count / total, library))
    print("\nSamples in SQLite by the nearest ParleyStore frame (which store call paid for them):")
    callers = [s for s, _ in sqlite_callers.most_common(8)]
    readable = demangle(callers)
    for name in callers:
        print("  %5.1f%%  %s" % (100.0 * sqlite_callers[name] / total, readable[name][:160]))
    print("\nSelf, top %d symbols:" % top)
    names = [s for s, _ in leaf_sym.most_common(top)]
    readable = demangle(names)
    for name in names:
        print("  %5.1f%%  %s" % (100.0 * leaf_sym[name] / total, readable[name][:160]))
    print()


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("files", nargs="+")
    parser.add_argument("--top", type=int, default=20)
    args = parser.parse_args()
    for perf_file in args.files:
        summarize(perf_file, args.top)
    return 0


if __name__ == "__main__":
    sys.exit(main())
