"""The goal table of the Parley bench: issue 23's targets (the hot path) first, then issue 10's that
issue 23 does not restate; imported by bench.py.

Each goal is judged on the median of its repetitions, with nginx's figure from the same run where the
target is relative to nginx; the range of the repetitions is shown beside it, so a goal met at the
median but not in every repetition reads as such.
"""

import os

import bench as b
import scale

CLIENT_BOTTLENECK = scale.CLIENT_BOTTLENECK
STARTUP_LIMIT_S = 0.2      # issue 23: "< 0.2 s to listening"
IDLE_RSS_LIMIT_MIB = 33.0  # issue 23: "~30 MiB idle"; met up to 10% above


def report(args, results, add):
    s = results.get("scale") or {}
    fmt, med, cell = b.fmt, scale.med, scale.cell
    runs = lambda count, variant: s.get(("run", count, variant))
    rows = []

    def goal(name, target, value, ok, note=""):
        rows.append((name, target, value, scale.met(ok), note))

    def bottleneck(*result_lists):
        notes = []
        found = [r for results_ in result_lists for r in results_ or []]
        if any(max(r["client_core"], r["upstream_core"]) >= CLIENT_BOTTLENECK for r in found):
            notes.append("client or upstream ≥ %.0f%% of a core in a repetition: may be client-bound"
                         % (100 * CLIENT_BOTTLENECK))
        busy = [r["machine_busy"] for r in found]
        if busy and max(busy) >= 0.9:
            notes.append("machine ≥ 90%% busy (up to %.0f%%)" % (100 * max(busy)))
        return "; ".join(notes)

    def clean(result_list):
        return all(r["errors"] == 0 and r["short"] == 0 for r in result_list or [])

    def failures(result_list):
        bad = sum(r["errors"] + r["short"] for r in result_list or [])
        return "%d errors/short streams" % bad if bad else ""

    def joined(*notes):
        return "; ".join(n for n in notes if n)

    # Issue 23
    sp, sn, soff, sone = (s.get(("setup", v)) for v in ("parley25", "nginx", "parley25-notitles", "parley25-onereq"))
    if sp:
        goal("setup CPU per new stream (titles on)", "≤ 1 ms", "%s ms (nginx %s ms)" % (
            cell(sp, "setup_ms", 2), cell(sn, "setup_ms", 2) if sn else "–"), scale.le(med(sp, "setup_ms"), 1.0),
            joined("titles off %s ms" % fmt(med(soff, "setup_ms"), 2) if soff else "",
                   "one-request start %s ms" % fmt(med(sone, "setup_ms"), 2) if sone else ""))
    storm = args.storm_streams
    one = s.get("one_request")
    for variant, label in (("parley25", ""), ("parley25-onereq", ", one-request start")):
        r, ng = runs(storm, variant), runs(storm, "nginx")
        if variant == "parley25-onereq" and not r:
            if runs(storm, "parley25"):
                goal("POST p99, %d starts in 1 s, one-request start" % storm, "≤ 50 ms",
                     "n/a" if not one else "not run", None,
                     "the server answers POST /api/conversations with `message` without an assistant_message"
                     if not one else "")
            continue
        if not r:
            continue
        goal("POST %s p99, %d starts in 1 s%s" % ("message" if not label else "conversation", storm, label),
             "≤ 50 ms", "%s ms (nginx first byte %s ms)" % (cell(r, "post_p99"), fmt(med(ng, "post_p99"))),
             clean(r) and scale.le(med(r, "post_p99"), 50.0), joined(bottleneck(r), failures(r)))
        goal("first text p99 after upstream's first byte, %d starts%s" % (storm, label), "≤ 100 ms",
             "%s ms (nginx %s ms)" % (cell(r, "first_up_p99"), fmt(med(ng, "first_up_p99"))),
             clean(r) and scale.le(med(r, "first_up_p99"), 100.0), joined(bottleneck(r), failures(r)))
    for count in args.scale_streams:
        p0, p25, ng = runs(count, "parley0"), runs(count, "parley25"), runs(count, "nginx")
        if not (p0 and p25 and ng):
            continue
        n99 = med(ng, "lat_p99")
        if count >= 100:
            off = runs(count, "parley0-notitles")
            goal("relay p99, frame 0, %d streams" % count, "≤ 2× nginx", "%s ms vs %s ms (%s)" % (
                cell(p0, "lat_p99"), cell(ng, "lat_p99"), b.ratio(med(p0, "lat_p99"), n99)),
                scale.le(med(p0, "lat_p99"), 2 * n99) and clean(p0),
                joined("titles off %s ms (%s)" % (cell(off, "lat_p99"), b.ratio(med(off, "lat_p99"), n99)) if off else "",
                       bottleneck(p0, ng), failures(p0)))
        off25 = runs(count, "parley25-notitles")
        goal("relay p99, default 25 ms frames, %d stream%s" % (count, "" if count == 1 else "s"), "≤ nginx + 25 ms",
             "%s ms vs %s ms" % (cell(p25, "lat_p99"), cell(ng, "lat_p99")),
             scale.le(med(p25, "lat_p99"), n99 + 25) and clean(p25),
             joined("titles off %s ms" % cell(off25, "lat_p99") if off25 else "", bottleneck(p25, ng), failures(p25)))
        if count in (100, 500):
            windowed = min(med(r, "window_share") or 0 for r in (p0, p25, ng)) >= 0.5
            if windowed:
                c0, c25, cn = med(p0, "cpu_per_k"), med(p25, "cpu_per_k"), med(ng, "cpu_per_k")
                how = "after the last start"
            else:
                setup25, setupn = s.get(("setup", "parley25")), s.get(("setup", "nginx"))
                c0, c25, cn = (scale.whole_run_per_k(p0, setup25), scale.whole_run_per_k(p25, setup25),
                               scale.whole_run_per_k(ng, setupn))
                how = ("whole run less setup CPU × streams: the window after the last start held %s%% of "
                       "the chunks" % " / ".join("%.0f" % (100 * (med(r, "window_share") or 0)) for r in (p0, p25, ng)))
            goal("relay CPU per 1,000 chunks, %d streams (frame 25, titles on)" % count, "≤ 3× nginx",
                 "%s vs %s ms (%s; frame 0: %s)" % (fmt(c25, 1), fmt(cn, 1), b.ratio(c25, cn), b.ratio(c0, cn)),
                 scale.le(c25, 3 * cn) if c25 and cn else None,
                 joined("titles off %s ms" % fmt(scale.relay_cpu(s, count, "parley25-notitles"), 1) if off25 else "",
                        how, bottleneck(p25, ng)))
    startup = results.get("startup")
    if startup:
        for which, label in (("restart", "on an existing database"), ("fresh", "on a fresh database")):
            seconds = [x[which + "_s"] for x in startup]
            goal("startup: spawn to listening, %s" % label, "< 0.2 s", "%s s (CPU %s s)" % (
                b.spread(seconds, 3), b.spread([x[which + "_cpu_s"] for x in startup], 2)),
                b.median(seconds) < STARTUP_LIMIT_S, "%d starts, default settings" % len(seconds))
        rss = [x["restart_rss_kib"] / 1024.0 for x in startup]
        goal("idle RSS after start", "~30 MiB (≤ %g)" % IDLE_RSS_LIMIT_MIB, "%s MiB" % b.spread(rss, 1),
             b.median(rss) <= IDLE_RSS_LIMIT_MIB, "1 s after listening, no request yet, default settings; "
             "anonymous %s MiB, file-backed %s MiB (%d shared libraries mapped, their pages shared with other "
             "processes); fresh database %s MiB" % (
                 b.fmt(b.median([x["restart_anon_kib"] / 1024.0 for x in startup]), 1),
                 b.fmt(b.median([x["restart_file_kib"] / 1024.0 for x in startup]), 1), startup[0]["libraries"],
                 b.fmt(b.median([x["fresh_rss_kib"] / 1024.0 for x in startup]), 1)))
    # Issue 10's goals that issue 23 does not restate
    for count, limit in ((1000, 250.0),):
        r, ng = runs(count, "parley25"), runs(count, "nginx")
        if r:
            goal("first text p99 after upstream's first byte, %d starts" % count, "≤ %.0f ms" % limit,
                 "%s ms (nginx %s ms)" % (cell(r, "first_up_p99"), fmt(med(ng, "first_up_p99"))),
                 clean(r) and scale.le(med(r, "first_up_p99"), limit), joined(bottleneck(r), failures(r)))
    idle = s.get("idle")
    if idle:
        goal("RSS per idle event stream, %d open" % idle["idle"], "≤ 30 KiB", "%s KiB" % fmt(idle.get("rss_per_stream_kib")),
             scale.le(idle.get("rss_per_stream_kib"), 30.0))
        goal("idle CPU, %d streams with heartbeats" % idle["idle"], "< 2% of a core",
             "%s%%" % fmt(idle.get("idle_core_pct"), 2), scale.le(idle.get("idle_core_pct"), 2.0))
        goal("10 active streams' p99 while %d wait" % idle["idle"], "≤ 5 ms per frame",
             "%s ms" % fmt(idle.get("active_p99"), 2), scale.le(idle.get("active_p99"), 5.0))
        goal("concurrent connections accepted", "10,000", "%d of %d streams open, %s still open at the end" % (
            idle["opened"], idle["idle"], idle.get("still_open", "–")),
             (idle["opened"] >= 10000 and idle.get("still_open") == idle["opened"]) if idle["idle"] >= 10000 else None,
             "" if idle["idle"] >= 10000 else "run with fewer than 10,000 (--quick)")
    if "scale" in args.only:
        ratio = scale.markdown_ratio(args.markdown_results)
        goal("Markdown streaming cost", "≤ 10× one full render", "%s× (%s)" % (fmt(ratio, 1), os.path.basename(
            args.markdown_results)) if ratio else "not run (make bench runs parley-markdown-bench)",
             scale.le(ratio, 10.0))
    if not rows:
        return
    add("## Goals (issue 23, then issue 10's others)")
    add("")
    add("Judged on the median of the repetitions (range in brackets), nginx from the same run. Load average "
        "(1 min) over the bench: %s." % results.get("loadavg", "–"))
    add("")
    add("| goal | target | measured | | note |")
    add("|---|---|---|---|---|")
    for row in rows:
        add("| %s | %s | %s | %s | %s |" % row)
    add("")
