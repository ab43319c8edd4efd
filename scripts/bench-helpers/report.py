#!/usr/bin/env python3
"""Turns the raw results of scripts/bench into docs/benchmarks.md and gnuplot PNGs (stdlib only).

  report.py --work DIR --out DIR

DIR (work) holds runs.jsonl (one JSON object per run), machine.json, planner.json (Google
Benchmark JSON or null) and the per-configuration argv files; OUT gets benchmarks.md and img/.
"""
import argparse
import json
import math
import os
import statistics
import subprocess
import sys
from collections import defaultdict

STARTERS = {
    "A": "qlaunch start (auto)",
    "B": "qlaunch start --prealloc launcher",
    "C": "virsh create",
    "D": "plain QEMU",
}
PHASES = ["parse", "topology", "probe", "plan", "preflight", "spawn", "qmp_ready", "prealloc", "cont", "total"]


def median(xs):
    return statistics.median(xs) if xs else None


def geomean(xs):
    xs = [x for x in xs if x]
    return math.exp(sum(math.log(x) for x in xs) / len(xs)) if xs else None


def fmt_ms(x):
    if x is None:
        return "—"
    return f"{x:.0f}" if x >= 100 else f"{x:.1f}" if x >= 1 else f"{x:.2f}"


def fmt_r(x):
    return f"{x:.2f}" if x else "—"


def load(work):
    runs = [json.loads(l) for l in open(os.path.join(work, "runs.jsonl")) if l.strip()]
    machine = json.load(open(os.path.join(work, "machine.json")))
    planner = json.load(open(os.path.join(work, "planner.json")))
    return runs, machine, planner


def start_results(runs):
    """(size, cells) -> starter -> list of ms; plus qlaunch phases and failure counts."""
    ms = defaultdict(lambda: defaultdict(list))
    by_rep = defaultdict(dict)  # (size, cells, starter) -> rep -> ms
    phases = defaultdict(lambda: defaultdict(lambda: defaultdict(list)))
    failed = defaultdict(int)
    for r in runs:
        if r["kind"] != "start" or r["rep"] == 0:
            continue
        key = (r["size_gib"], r["cells"])
        res = r["result"]
        if res is None or res.get("rc") != 0:
            failed[(key, r["starter"])] += 1
            continue
        ms[key][r["starter"]].append(res["ms"])
        by_rep[key + (r["starter"],)][r["rep"]] = res["ms"]
        if r["starter"] in "AB":
            report = json.loads(res["stdout"])
            for p, v in report["timings_ms"].items():
                phases[key][r["starter"]][p].append(v)
            phases[key][r["starter"]]["_prealloc_by"] = report.get("prealloc")
    return ms, by_rep, phases, failed


def paired_ratio(by_rep, key, a, b):
    """Median over rounds of X_round / Y_round: runs of one round ran seconds apart, so drift in
    the machine's load cancels out."""
    xa, xb = by_rep.get(key + (a,), {}), by_rep.get(key + (b,), {})
    rs = [xa[r] / xb[r] for r in xa if r in xb]
    return median(rs)


def prealloc_results(runs):
    """(page_kib, size, threads, tool) -> list of seconds; ("pop", page_kib, ...) -> populate seconds."""
    out = defaultdict(list)
    pop = defaultdict(list)
    for r in runs:
        if r["kind"] != "prealloc" or r["result"] is None or r["result"].get("rc") != 0:
            continue
        res = json.loads(r["result"]["stdout"])
        out[(r["page_kib"], r["size_gib"], r["threads"], r["tool"])].append(res["seconds"])
        pop[(r["page_kib"], r["size_gib"], r["threads"], r["tool"])].append(res["populate_seconds"])
    return out, pop


def gnuplot(script):
    subprocess.run(["gnuplot"], input=script, text=True, check=True)


def plot_start(ms, out_png, work):
    sizes = sorted({k[0] for k in ms})
    cells = sorted({k[1] for k in ms})
    for c in cells:
        with open(os.path.join(work, f"start-{c}.dat"), "w") as f:
            f.write("# GiB A B C D (median seconds)\n")
            for s in sizes:
                row = [median(ms[(s, c)].get(k, [])) for k in "ABCD"]
                f.write(f"{s} " + " ".join(f"{v / 1000:.4f}" if v else "NaN" for v in row) + "\n")
    ymax = 1.1 * max([median(v) for cell in ms.values() for v in cell.values() if v] + [1]) / 1000
    n = len(cells)
    script = [
        f"set terminal pngcairo size {430 * n},440 font 'Sans,10'",
        f"set output '{out_png}'",
        f"set multiplot layout 1,{n} title 'Start latency, spawn to running (median; lower is better)' font 'Sans,12'",
        "set logscale x 2", f"set xrange [{sizes[0] / 1.25}:{sizes[-1] * 1.25}]",
        "set xtics (" + ", ".join(f"'{s}' {s}" for s in sizes) + ")",
        "set xlabel 'guest memory (GiB, 2 MiB hugepages)'", "set ylabel 'seconds'", f"set yrange [0:{ymax:.2f}]",
        "set grid", "set key top left Left reverse samplen 2",
    ]
    styles = {"A": "lc rgb '#1f77b4' pt 7", "B": "lc rgb '#2ca02c' pt 5", "C": "lc rgb '#d62728' pt 9",
              "D": "lc rgb '#7f7f7f' pt 13 dt 2"}
    for c in cells:
        dat = os.path.join(work, f"start-{c}.dat")
        script.append(f"set title '{c} guest cell{'s' if c > 1 else ''}'")
        plots = [f"'{dat}' using 1:{i + 2} with linespoints lw 2 {styles[k]} title '{k}: {STARTERS[k]}'"
                 for i, k in enumerate("ABCD")]
        script.append("plot " + ", ".join(plots))
    script.append("unset multiplot")
    gnuplot("\n".join(script) + "\n")


def plot_ratio(ms, by_rep, out_png, work):
    sizes = sorted({k[0] for k in ms})
    cells = sorted({k[1] for k in ms})
    dat = os.path.join(work, "ratio.dat")
    allvals = []
    with open(dat, "w") as f:
        f.write("# GiB " + " ".join(f"A/C_{c} A/D_{c}" for c in cells) + "\n")
        for s in sizes:
            vals = []
            for c in cells:
                ac, ad = paired_ratio(by_rep, (s, c), "A", "C"), paired_ratio(by_rep, (s, c), "A", "D")
                vals += [ac if ac else float("nan"), ad if ad else float("nan")]
            f.write(f"{s} " + " ".join(f"{v:.4f}" for v in vals) + "\n")
            allvals += [v for v in vals if not math.isnan(v)]
    ymax = max([1.2] + [v * 1.1 for v in allvals])
    colors = ["#1f77b4", "#ff7f0e", "#9467bd", "#8c564b"]
    script = [
        "set terminal pngcairo size 860,460 font 'Sans,10'", f"set output '{out_png}'",
        "set title 'qlaunch start (auto) time / other starter time (below 1: qlaunch is faster)' font 'Sans,11'",
        "set logscale x 2", f"set xrange [{sizes[0] / 1.25}:{sizes[-1] * 1.25}]",
        "set xtics (" + ", ".join(f"'{s}' {s}" for s in sizes) + ")",
        "set xlabel 'guest memory (GiB, 2 MiB hugepages)'", "set ylabel 'time ratio'",
        f"set yrange [0:{ymax:.2f}]", "set grid", "set key outside right center spacing 1.3",
    ]
    plots = ["1 with lines lc rgb 'black' dt 3 notitle"]
    for i, c in enumerate(cells):
        col = colors[i % len(colors)]
        pl = "s" if c > 1 else ""
        plots.append(f"'{dat}' using 1:{2 * i + 2} with linespoints lw 2 lc rgb '{col}' pt 7 title 'A/C (virsh create), {c} cell{pl}'")
        plots.append(f"'{dat}' using 1:{2 * i + 3} with linespoints lw 2 lc rgb '{col}' pt 6 dt 2 title 'A/D (plain QEMU), {c} cell{pl}'")
    script.append("plot " + ", ".join(plots))
    gnuplot("\n".join(script) + "\n")


def plot_prealloc(pre, out_png, work):
    pages = sorted({k[0] for k in pre}, reverse=True)
    sizes = sorted({k[1] for k in pre})
    n = len(pages)
    script = [
        f"set terminal pngcairo size {480 * n},440 font 'Sans,10'", f"set output '{out_png}'",
        f"set multiplot layout 1,{n} title 'Preallocation throughput (median; higher is better)' font 'Sans,12'",
        "set xrange [0.7:2.3]", "set xtics (1, 2)", "set xlabel 'threads'", "set ylabel 'GiB/s'",
        "set grid", "set key bottom right",
    ]
    dashes = [1, 2, 3, 4]
    for page in pages:
        plots = []
        for si, size in enumerate(sizes):
            for tool, col, pt, label in (("qlaunch", "#1f77b4", 7, "qlaunch prealloc"),
                                         ("ref", "#d62728", 5, "populate\\_ref (C)")):
                dat = os.path.join(work, f"prealloc-{page}-{size}-{tool}.dat")
                with open(dat, "w") as f:
                    for t in (1, 2):
                        m = median(pre.get((page, size, t, tool), []))
                        f.write(f"{t} {size / m:.4f}\n" if m else f"{t} NaN\n")
                plots.append(f"'{dat}' using 1:2 with linespoints lw 2 lc rgb '{col}' pt {pt} "
                             f"dt {dashes[si % len(dashes)]} title '{label}, {size} GiB'")
        best = [k[1] / median(v) for k, v in pre.items() if k[0] == page and v]
        script.append(f"set yrange [0:{1.2 * max(best + [0.1]):.2f}]")
        script.append(f"set title '{'2 MiB hugepages' if page == 2048 else '4 KiB pages'}'")
        script.append("plot " + ", ".join(plots))
    script.append("unset multiplot")
    gnuplot("\n".join(script) + "\n")


def memory_args(path):
    """The -object/-numa lines of an argv file (one argument per line, or libvirt's one line)."""
    text = open(path).read()
    if "\n" in text.strip():
        args = [l for l in text.splitlines() if l]
    else:
        args = text.split()
    out = []
    for i, a in enumerate(args[:-1]):
        if a in ("-object", "-numa") and "secret" not in args[i + 1]:
            out.append(f"{a} {args[i + 1].strip(chr(39))}")
    return out


def write_doc(args, runs, machine, planner, ms, by_rep, phases, failed, pre, pre_pop):
    L = []
    w = L.append
    sizes = sorted({k[0] for k in ms})
    cells = sorted({k[1] for k in ms})
    reps = machine["reps"]
    w("# Benchmarks")
    w("")
    w("Generated by `scripts/bench` — do not edit by hand. To regenerate (as root, from the repository root):")
    w("")
    w("```sh")
    w(machine["command"])
    w("```")
    w("")
    w(f"Run on {machine['date']}, commit {machine['commit']}; the whole run took "
      f"{machine['runtime_s'] // 60} min {machine['runtime_s'] % 60} s"
      + (" (**QUICK mode**: a reduced matrix)" if machine["quick"] else "") + ".")
    w("`BENCH_QUICK=1 scripts/bench` runs a small matrix in a few minutes; `BENCH_REPS`, `BENCH_SIZES`, "
      "`BENCH_CELLS`, `BENCH_PREALLOC_SIZES`, `BENCH_PREALLOC_4K_SIZES` and `BENCH_OUT` override single settings (see the script's header).")
    w("")
    w("**Read the ratios, not the absolute times.** Absolute times hold for this machine only: a small "
      "virtual machine (nested virtualisation) with two vCPUs that other jobs (compilers, test runs) "
      "shared while the benchmark ran, so single runs are noisy; every figure is a median of "
      f"{reps} interleaved runs, with the range (min–max) where it helps.")
    w("")
    # ---- summary
    w("## Summary")
    w("")
    def gm(a, b, s):
        return geomean([x for x in (paired_ratio(by_rep, k, a, b) for k in ms if k[0] == s) if x])
    if ms:
        w("Time ratios per guest size (geometric mean over the cell counts; below 1 = the first is faster):")
        w("")
        w("| GiB | qlaunch auto / virsh create | qlaunch auto / plain QEMU | qlaunch launcher / virsh create | qlaunch launcher / plain QEMU |")
        w("|---:|---:|---:|---:|---:|")
        for sz in sizes:
            w(f"| {sz} | " + " | ".join(fmt_r(gm(a, b, sz)) for a, b in ("AC", "AD", "BC", "BD")) + " |")
        w("")
    if pre:
        big = max(k[1] for k in pre if k[0] == 2048) if any(k[0] == 2048 for k in pre) else None
        if big:
            parts = []
            for t in (1, 2):
                q = median(pre.get((2048, big, t, "qlaunch"), []))
                r = median(pre.get((2048, big, t, "ref"), []))
                if q and r:
                    parts.append(f"{t} thread{'s' if t > 1 else ''}: {big / q:.2f} vs {big / r:.2f} GiB/s, ratio {r / q:.2f}")
            w(f"`qlaunch prealloc` vs the C reference on {big} GiB of 2 MiB pages — " + "; ".join(parts) + ".")
            w("")
    if planner:
        for b in planner["benchmarks"]:
            if b["run_name"].startswith("BM_PlanRender_64Nodes") and (b.get("aggregate_name") == "median" or reps == 1):
                w(f"Planning and rendering a 256-backend domain on a 64-node host: {b['cpu_time']:.0f} "
                  f"{b['time_unit'].replace('us', 'µs')} of CPU.")
                w("")
                break

    w("## Machine")
    w("")
    w("| | |")
    w("|---|---|")
    w(f"| CPU | {machine['cpu']}, {machine['cpus']} CPUs, {machine['sockets']} socket(s)"
      + (f", running under {machine['hypervisor']}" if machine["hypervisor"] else "") + " |")
    w(f"| memory | {machine['memory_gib']} GiB, {machine['numa_nodes']} NUMA node(s) |")
    w(f"| OS, kernel | {machine['os']}, Linux {machine['kernel']} |")
    w(f"| QEMU | {machine['qemu']} |")
    w(f"| libvirt | {machine['libvirt']} |")
    w(f"| accelerator | {'KVM (/dev/kvm works)' if machine['accel'] == 'kvm' else 'TCG (no usable /dev/kvm)'} |")
    w(f"| load average | {machine['loadavg_start']} at the start, {' '.join(machine['loadavg_end'])} at the end |")
    w("")

    # ---- 1. start latency
    w("## 1. Start latency: spawn to running")
    w("")
    w("One domain XML per configuration, used as it is by all four starters: "
      f"`type='{machine['accel']}'`, N GiB of 2 MiB hugepages on shared memfds (`<source type='memfd'/>`, "
      "`<access mode='shared'/>`, `<allocation mode='immediate'/>`), split evenly over 1, 2 or 4 guest "
      "NUMA cells, all bound (`strict`) to host node 0; max(2, cells) vCPUs, `qemu64`, no disk, no kernel: "
      "the guest never boots, it only has to be running.")
    w("")
    w("| starter | what is timed |")
    w("|---|---|")
    w("| A | `qlaunch start --json DOMAIN.xml` (`--prealloc auto`: QEMU 7.2 preallocates, one thread-context per CPU set, `prealloc-threads` = CPUs), until it exits |")
    w("| B | `qlaunch start --json --prealloc launcher DOMAIN.xml`: qlaunch's own pinned preallocator fills the memfds while QEMU starts, until it exits |")
    w("| C | `virsh -c qemu:///system create DOMAIN.xml` (libvirtd 9.0 already running), until it exits |")
    w("| D | QEMU by hand with qlaunch's argv (`qlaunch domxml-to-native --format lines`: thread-contexts, `prealloc-threads`, `-S`, QMP socket): from exec until `cont` is acknowledged and `query-status` says running (`scripts/bench-helpers/starter.py`) |")
    w("")
    w(f"Runs are interleaved, configuration after configuration, {reps} rounds, after one "
      "discarded warm-up round; each round starts one starter later (A B C D, B C D A, C D A B, …), "
      "because the first run after a change of configuration tends to be a little slower here and no "
      "starter should always pay for it. The hugepage pool is reserved once for the largest size and touched "
      "once before any run; after every run the domain is destroyed (`qlaunch destroy`, `virsh "
      "destroy`, QMP `quit`) and the script waits until every page is back in the pool. Ratios are "
      "time ratios, the median over the rounds of X/Y within a round (runs seconds apart, so drift in "
      "the machine's load cancels out; hence not always the ratio of the medians): **X/Y below 1 means X is faster than Y**. libvirt's argv (below) has the same "
      "backends and a thread-context per backend but no `prealloc-threads`, so QEMU's default applies; "
      "that difference is part of what C measures.")
    if machine.get("dropped_sizes"):
        w("")
        w(f"Sizes dropped because the pool could not hold them here: {', '.join(machine['dropped_sizes'])} GiB.")
    w("")
    w("Median ms (min–max):")
    w("")
    w("| GiB | cells | A: qlaunch auto | B: qlaunch launcher | C: virsh create | D: plain QEMU | A/C | A/D | B/C | B/D |")
    w("|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    for s in sizes:
        for c in cells:
            cell = ms[(s, c)]
            med = {k: median(cell.get(k, [])) for k in "ABCD"}
            def rng(k):
                xs = cell.get(k, [])
                if not xs:
                    return "failed"
                note = f" ({failed[((s, c), k)]} failed)" if failed[((s, c), k)] else ""
                return f"**{fmt_ms(med[k])}** ({fmt_ms(min(xs))}–{fmt_ms(max(xs))}){note}"
            w(f"| {s} | {c} | {rng('A')} | {rng('B')} | {rng('C')} | {rng('D')} | "
              + " | ".join(fmt_r(paired_ratio(by_rep, (s, c), a, b)) for a, b in ("AC", "AD", "BC", "BD")) + " |")
    w("")
    # Geometric means of the ratios per size (over cell counts) and overall.
    def ratios(a, b, keys):
        return [x for x in (paired_ratio(by_rep, k, a, b) for k in keys) if x]
    w("Geometric mean of the time ratios over the cell counts:")
    w("")
    w("| GiB | A/C | A/D | B/C | B/D | D/C |")
    w("|---:|---:|---:|---:|---:|---:|")
    for s in sizes + ["all"]:
        keys = [k for k in ms if s == "all" or k[0] == s]
        row = [geomean(ratios(a, b, keys)) for a, b in (("A", "C"), ("A", "D"), ("B", "C"), ("B", "D"), ("D", "C"))]
        w(f"| {s} | " + " | ".join(f"{x:.2f}" if x else "—" for x in row) + " |")
    w("")
    if sizes:
        small = sizes[0]
        def diff(a, b):
            ds = []
            for c in cells:
                xa, xb = by_rep.get((small, c, a), {}), by_rep.get((small, c, b), {})
                ds += [xa[r] - xb[r] for r in xa if r in xb]
            return median(ds)
        dc, da, db = diff("C", "D"), diff("A", "D"), diff("B", "D")
        if dc is not None and da is not None and db is not None:
            w(f"Fixed cost over plain QEMU, at {small} GiB (median over all rounds and cell counts of the "
              f"difference within a round): virsh create {dc:+.0f} ms, qlaunch auto {da:+.0f} ms, "
              f"qlaunch launcher {db:+.0f} ms. As the guest grows, preallocation dominates and every "
              "ratio moves towards 1.")
            w("")
    w("![Start latency vs guest size, one panel per cell count](img/start-latency.png)")
    w("")
    w("![qlaunch start time relative to virsh create and plain QEMU](img/start-ratio.png)")
    w("")
    w("Where qlaunch's time went (`start --json` phases, median ms; `qmp_ready` holds QEMU's own "
      "preallocation in A, `prealloc` the launcher's remainder in B — see `launcher/timings.h`):")
    w("")
    w("| GiB | cells | starter | " + " | ".join(PHASES) + " |")
    w("|---:|---:|---|" + "---:|" * len(PHASES))
    for s in sizes:
        for c in cells:
            for k in "AB":
                ph = phases[(s, c)].get(k)
                if not ph:
                    continue
                w(f"| {s} | {c} | {k} ({ph['_prealloc_by']}) | "
                  + " | ".join(fmt_ms(median(ph.get(p, []))) for p in PHASES) + " |")
    w("")
    ex = (sizes[len(sizes) // 2] if sizes else 2, 2 if 2 in cells else cells[-1])
    q_argv = os.path.join(args.work, f"qlbench-{ex[0]}g-{ex[1]}c.argv")
    l_argv = os.path.join(args.work, f"qlbench-{ex[0]}g-{ex[1]}c.libvirt-argv")
    if os.path.exists(q_argv) and os.path.exists(l_argv):
        w(f"The memory arguments of the {ex[0]} GiB, {ex[1]}-cell domain — A and D run qlaunch's, "
          "C runs libvirt's (from `virsh domxml-to-native qemu-argv`):")
        w("")
        w("```text")
        w("# qlaunch domxml-to-native")
        L.extend(memory_args(q_argv))
        w("# libvirt 9.0")
        L.extend(memory_args(l_argv))
        w("```")
        w("")

    # ---- 2. prealloc
    max_2m = max([k[1] for k in pre if k[0] == 2048] or [0])
    max_4k = max([k[1] for k in pre if k[0] == 4] or [0])
    w("## 2. Preallocation throughput")
    w("")
    w("`qlaunch prealloc --size N --page-size 2M|4K --threads T --json` against "
      "`prealloc/bench/populate_ref.c` (built by the script with `cc -O2`): one memfd, mapped shared, "
      "populated with `MADV_POPULATE_WRITE` — one call, or with T threads one call per thread on equal "
      "slices, no pinning, no NUMA policy. Both report create + map + populate + unmap; throughput is "
      "size / median of that time. Runs interleaved (qlaunch, reference; 1 then 2 threads; each size), "
      f"the order reversed every other round, {reps} rounds; 2 MiB pages from the reserved, warmed pool, "
      "4 KiB pages after the pool was given back, each 4 KiB group after an untimed touch of the same "
      "size (see below)" + (" (fewer sizes of 4 KiB pages, `BENCH_PREALLOC_4K_SIZES`)" if max_4k < max_2m else "") + ". **Ratio = qlaunch throughput / reference throughput; above 1 means qlaunch is faster.**")
    w("")
    w("| pages | GiB | threads | qlaunch prealloc s (GiB/s) | populate_ref s (GiB/s) | ratio | ratio, populate only |")
    w("|---|---:|---:|---:|---:|---:|---:|")
    for page in sorted({k[0] for k in pre}, reverse=True):
        for size in sorted({k[1] for k in pre if k[0] == page}):
            for t in (1, 2):
                q = median(pre.get((page, size, t, "qlaunch"), []))
                r = median(pre.get((page, size, t, "ref"), []))
                qp = median(pre_pop.get((page, size, t, "qlaunch"), []))
                rp = median(pre_pop.get((page, size, t, "ref"), []))
                cellq = f"{q:.3f} ({size / q:.2f})" if q else "—"
                cellr = f"{r:.3f} ({size / r:.2f})" if r else "—"
                w(f"| {'2 MiB' if page == 2048 else '4 KiB'} | {size} | {t} | {cellq} | {cellr} | "
                  f"{fmt_r(r / q if q and r else None)} | {fmt_r(rp / qp if qp and rp else None)} |")
    w("")
    w("\"populate only\" compares the populate step alone (`populate_seconds` of both), without creating, "
      "mapping and unmapping the memfd.")
    w("")
    warm = [r for r in runs if r["kind"] in ("warm", "warm2")]
    if len(warm) == 2:
        a, b = warm[0]["result"], warm[1]["result"]
        w(f"First touch of the freshly reserved pool ({a['size_bytes'] / 2**30:.0f} GiB, "
          f"{a['threads']} threads): {a['gib_per_s']:.2f} GiB/s; the same again right after: "
          f"{b['gib_per_s']:.2f} GiB/s. This VM's balloon reports freed memory back to the "
          "hypervisor (virtio-balloon free page reporting), and memory touched for the first time after "
          "that faults in slowly. Hence the pool is reserved and touched once before anything is timed, "
          "and every 4 KiB group starts with an untimed touch; 4 KiB runs still draw on memory the kernel "
          "has just freed, and part of it may have been handed back already, which makes them noisier.")
        w("")
    w("![Preallocation throughput vs threads, 2 MiB and 4 KiB pages](img/prealloc-throughput.png)")
    w("")

    # ---- 3. planner
    w("## 3. Planner speed")
    w("")
    if planner:
        w("`build/qlaunch_planner_bench` (`tests/bench/planner_bench.cc`, Google Benchmark): "
          "`qemu::PlanLaunch` — memory backends, thread-contexts, argv rendering — for a 64-node host "
          "(48 nodes with 4 CPUs, 16 CPU-less, 8 sockets) and a domain with 128 guest cells and 128 "
          "pc-dimms (256 hugepage memfd backends bound across the host nodes), and for scale the "
          f"two-cell shape on a two-node host. Median of {reps} repetitions; CPU time is the figure to read "
          "on this shared machine, wall time includes waiting for a CPU:")
        w("")
        w("| benchmark | wall time | CPU time | backends | thread-contexts | argv words |")
        w("|---|---:|---:|---:|---:|---:|")
        rows = {}
        for b in planner["benchmarks"]:  # the median aggregate, or the single run without repetitions
            if b.get("aggregate_name") == "median" or (b.get("run_type") == "iteration" and b["run_name"] not in rows):
                rows[b["run_name"]] = b
        for name, b in rows.items():
            unit = {"us": "µs", "ms": "ms", "ns": "ns"}.get(b["time_unit"], b["time_unit"])
            cnt = lambda k: f"{b[k]:.0f}" if k in b else "—"
            w(f"| {name} | {b['real_time']:.1f} {unit} | {b['cpu_time']:.1f} {unit} | "
              f"{cnt('backends')} | {cnt('contexts')} | {cnt('argv')} |")
        w("")
        ctx = planner.get("context", {})
        if ctx.get("library_build_type") == "debug":
            w("(Google Benchmark prints \"Library was built as DEBUG\": that is Debian's build of the "
              "benchmark library itself; the code measured is qlaunch's RelWithDebInfo build.)")
            w("")
    else:
        w("Skipped: Google Benchmark (`libbenchmark-dev`) was not found when building.")
        w("")
    return "\n".join(L)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--work", required=True)
    ap.add_argument("--out", required=True)
    args = ap.parse_args()
    runs, machine, planner = load(args.work)
    ms, by_rep, phases, failed = start_results(runs)
    pre, pre_pop = prealloc_results(runs)
    img = os.path.join(args.out, "img")
    os.makedirs(img, exist_ok=True)
    if ms:
        plot_start(ms, os.path.join(img, "start-latency.png"), args.work)
        plot_ratio(ms, by_rep, os.path.join(img, "start-ratio.png"), args.work)
    if pre:
        plot_prealloc(pre, os.path.join(img, "prealloc-throughput.png"), args.work)
    doc = write_doc(args, runs, machine, planner, ms, by_rep, phases, failed, pre, pre_pop)
    with open(os.path.join(args.out, "benchmarks.md"), "w") as f:
        f.write(doc + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
