#!/usr/bin/env python3
"""Turns the raw results of scripts/bench into docs/benchmarks.md and gnuplot PNGs (stdlib only).

  report.py --work DIR --out DIR

DIR (work) holds machine.json, start-<G>g-<C>c.json and early-<G>g-<C>c.json (`qlaunch bench --json`; tcg-start-* and
tcg-early-* too where the machine has KVM), fixed-cost.json,
plan-*.json (`domxml-to-native --format json`), libvirt-argv-*.txt, prealloc.jsonl (timed.py lines),
planner.json (Google Benchmark JSON or null) and warm1/warm2.json; OUT gets benchmarks.md and img/.

One document, its sections in the order they print; issue 22's rows and its TCG section come from floor_report.py.
"""
import argparse
import glob
import json
import os
import subprocess
import sys
from collections import defaultdict

from bench_data import fmt_ms, fmt_r, load_benches, med, phase_median, starter, verdict
from fixed_cost import hand_written_sections, target_rows
from floor_report import floor_target_rows, overlap_table, tcg_section

# The targets of docs/benchmarks.md (issue "fast by default"): (what, size or None, limit).
START_TARGETS = [("qlaunch/virsh", 8, 0.65), ("qlaunch/qemu", 8, 0.95), ("qlaunch/kernel", 8, 1.15)]
EARLY_RUNNING_MS = 100
EARLY_TOTAL_RATIO = 1.10
PREALLOC_RATIO = 1.05


def gnuplot(script):
    subprocess.run(["gnuplot"], input=script, text=True, check=True)


def warm_results(work):
    """size GiB -> [fork-to-exit ms of each warm start] (scripts/bench-warm's JSON lines, warm.jsonl)."""
    res = defaultdict(list)
    path = os.path.join(work, "warm.jsonl")
    if not os.path.exists(path):
        return {}
    for line in open(path):
        if line.startswith("{"):
            r = json.loads(line)
            if r.get("kind") == "warm" and "exit_ms" in r:
                res[r["size_gib"]].append(r["exit_ms"])
    return dict(res)


def plot_start(starts, png, work, warm=None):
    warm = warm or {}
    data = os.path.join(work, "start.dat")
    with open(data, "w") as f:
        for (size, cells), b in starts.items():
            f.write(f"{size} " + " ".join(str(starter(b, n) or "NaN") for n in ("qlaunch", "virsh", "qemu", "kernel")) +
                    f" {med(warm[size]) if warm.get(size) else 'NaN'}\n")
    warm_line = (",\\\n     '' using 1:6 with linespoints lw 2 dt 4 title 'qlaunch start from the warm pool (bench-warm, 1 cell)'"
                 if warm else "")
    gnuplot(f"""set terminal pngcairo noenhanced size 900,520 font ",10"
set output '{png}'
set title "Start latency, spawn to running (median ms), 2 MiB hugepages, shared memfd"
set xlabel "guest memory (GiB)"; set ylabel "ms"; set key top left; set grid
plot '{data}' using 1:2 with linespoints lw 2 title 'qlaunch start', \\
     '' using 1:3 with linespoints title 'virsh create', \\
     '' using 1:4 with linespoints title 'plain QEMU', \\
     '' using 1:5 with linespoints dt 2 title 'kernel populate limit (populate_ref)'{warm_line}
""")


def prealloc_results(work):
    """(page, gib, threads) -> {"qlaunch": [ms by rep], "ref": [...]}, rep-aligned."""
    res = defaultdict(lambda: defaultdict(dict))
    path = os.path.join(work, "prealloc.jsonl")
    if not os.path.exists(path):
        return {}
    for line in open(path):
        r = json.loads(line)
        if r["rc"] == 0:
            res[(r["page"], r["gib"], r["threads"])][r["tool"]][r["rep"]] = r["ms"]
    return res


def paired(q, r):
    reps = sorted(set(q) & set(r))
    return med([q[i] / r[i] for i in reps]) if reps else None


def plot_prealloc(pre, png, work):
    data = os.path.join(work, "prealloc.dat")
    pages = sorted({k[0] for k in pre})
    with open(data, "w") as f:
        for page in pages:
            for (pg, gib, t), v in sorted(pre.items()):
                if pg != page:
                    continue
                q, r = med(list(v["qlaunch"].values())), med(list(v["ref"].values()))
                f.write(f"{t} {gib / q * 1000 if q else 'NaN'} {gib / r * 1000 if r else 'NaN'}\n")
            f.write("\n\n")
    lines = []
    for i, page in enumerate(pages):
        lines.append(f"'{data}' index {i} using 1:2 with linespoints lw 2 title 'qlaunch prealloc, {page} pages'")
        lines.append(f"'{data}' index {i} using 1:3 with linespoints dt 2 title 'populate_ref, {page} pages'")
    gnuplot(f"""set terminal pngcairo noenhanced size 900,520 font ",10"
set output '{png}'
set title "Preallocation throughput (GiB/s, whole process) against threads"
set xlabel "threads"; set ylabel "GiB/s"; set key bottom right; set grid; set xtics 1
plot {", ".join(lines)}
""")


def start_rows(w, benches, pages):
    for (s, c), b in benches.items():
        cells = []
        for n in ("qlaunch", "virsh", "qemu", "kernel"):
            m = starter(b, n)
            cells.append("—" if m is None else f"**{fmt_ms(m)}** ({fmt_ms(starter(b, n, 'min'))}–{fmt_ms(starter(b, n, 'max'))})")
        r = b["ratios"]
        w(f"| {s} | {c} | {pages} | " + " | ".join(cells) + f" | {fmt_r(r.get('qlaunch/virsh'))} | "
          f"{fmt_r(r.get('qlaunch/qemu'))} | {fmt_r(r.get('qlaunch/kernel'))} |")


def write_doc(machine, starts, earlies, gigantic, pre, planner, work, tcg_starts=None, tcg_earlies=None):
    tcg_starts, tcg_earlies = tcg_starts or {}, tcg_earlies or {}
    L = []
    w = L.append
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
      f"{machine.get('runtime_s', 0) // 60} min {machine.get('runtime_s', 0) % 60} s. `BENCH_QUICK=1 scripts/bench` runs a "
      "small matrix in a couple of minutes; `BENCH_REPS`, `BENCH_SIZES`, `BENCH_CELLS`, `BENCH_PREALLOC_GIB`, "
      "`BENCH_PREALLOC_1G_GIB`, `BENCH_TCG` and `BENCH_OUT` override single settings (see the script's header). The start-latency "
      "part is `qlaunch bench` (see docs/usage.md), which anyone can run on their own XML.")
    w("")
    w("**Read the ratios, not the absolute times.** Absolute times hold for this machine only: a small virtual "
      "machine (nested virtualisation) with two vCPUs that other jobs share, so single runs are noisy. Every ratio "
      "is the median over rounds of X/Y within one round (runs seconds apart, so drift in the machine's load "
      f"cancels out); every time is a median of {reps} runs, with the range (min–max). Below 1 means qlaunch is faster.")
    w("")

    # ---- summary: targets
    w("## Targets")
    w("")
    w("| target | measured | |")
    w("|---|---:|---|")
    for pair, size, limit in START_TARGETS:
        for (s, c), b in starts.items():
            if s == size:
                v = b["ratios"].get(pair)
                w(f"| {pair} ≤ {limit} at {s} GiB, {c} cells, default flags | {fmt_r(v)} | {verdict(v, limit)} |")
    for (s, c), b in earlies.items():
        v = phase_median(b, "running")
        w(f"| `--run-early`: time to running ≤ {EARLY_RUNNING_MS} ms at {s} GiB | {fmt_ms(v)} ms | {verdict(v, EARLY_RUNNING_MS)} |")
    for (s, c), b in earlies.items():
        v = b["ratios"].get("qlaunch/kernel")
        w(f"| `--run-early`: total / kernel ≤ {EARLY_TOTAL_RATIO} at {s} GiB | {fmt_r(v)} | {verdict(v, EARLY_TOTAL_RATIO)} |")
    two = bool(tcg_starts or tcg_earlies)
    L.extend(floor_target_rows(starts, earlies, machine["accel"].upper() if two else ""))
    L.extend(floor_target_rows(tcg_starts, tcg_earlies, "TCG"))
    for (page, gib, t), v in sorted(pre.items()):
        if t <= 2:
            r = paired(v["qlaunch"], v["ref"])
            w(f"| `qlaunch prealloc` / populate_ref ≤ {PREALLOC_RATIO}, {page} pages, {gib} GiB, {t} thread(s) | {fmt_r(r)} | "
              f"{verdict(r, PREALLOC_RATIO)} |")
    L.extend(target_rows(os.path.join(work, "fixed-cost.json")))
    w("")
    w("What stands behind a target that is not met is said in the section it comes from.")
    w("")

    # ---- machine
    w("## Machine")
    w("")
    w("| | |")
    w("|---|---|")
    hv = f", running under {machine['hypervisor']}" if machine.get("hypervisor") else ""
    w(f"| CPU | {machine['cpu']}, {machine['cpus']} CPUs, {machine['sockets']} socket(s){hv} |")
    w(f"| memory | {machine['memory_gib']} GiB, {machine['numa_nodes']} NUMA node(s) |")
    w(f"| OS, kernel | {machine['os']}, Linux {machine['kernel']} |")
    w(f"| QEMU | {machine['qemu']} |")
    w(f"| libvirt | {machine['libvirt']} |")
    w(f"| accelerator | {machine['accel']} |")
    w(f"| load average | {machine['loadavg_start']} at the start, {' '.join(machine.get('loadavg_end', []))} at the end |")
    w("")

    # ---- 1. start latency
    w("## 1. Start latency: spawn to running")
    w("")
    w("One generated domain XML per size, used as it is by every starter: 2 MiB hugepages on shared memfds "
      "(`<source type='memfd'/>`, `<access mode='shared'/>`, `<allocation mode='immediate'/>`), split evenly over "
      "the guest cells, all bound (`strict`) to host node 0; `qemu64`, no disk, no kernel: the guest only has to be "
      "running. `qlaunch bench --json --runs N DOMAIN.xml` times:")
    w("")
    w("| starter | what is timed |")
    w("|---|---|")
    w("| qlaunch | `qlaunch start --json DOMAIN.xml`, default flags (`--prealloc auto`: on QEMU 7.2 qlaunch's own "
      "preallocator fills the shared hugetlb memfds, see docs/planner.md), fork to exit |")
    w("| virsh | `virsh -c qemu:///system create DOMAIN.xml` (libvirtd 9.0 already running), fork to exit |")
    w("| qemu | QEMU by hand with the argv of `domxml-to-native --prealloc qemu` (thread-contexts, `prealloc-threads`, "
      "-S): exec until `cont` is acknowledged and QEMU says the guest runs (its `RESUME` event, else `query-status`), "
      "as `qlaunch start` waits |")
    w("| kernel | `populate_ref SIZE PAGE THREADS`: one memfd of the same bytes and page size, populated with "
      "`MADV_POPULATE_WRITE` by as many threads as qlaunch uses (every CPU), the whole process |")
    w("")
    w("One untimed warm-up of each, then the rounds, the order rotating by one each round; after every run the domain "
      "is destroyed and the bench waits until every hugepage is back.")
    w("")
    w("Median ms (min–max), and the per-round ratios:")
    w("")
    w("| GiB | cells | pages | qlaunch | virsh | qemu | kernel | qlaunch/virsh | qlaunch/qemu | qlaunch/kernel |")
    w("|---:|---:|---|---:|---:|---:|---:|---:|---:|---:|")
    start_rows(w, starts, "2 MiB")
    start_rows(w, gigantic, "1 GiB")
    w("")
    if gigantic:
        w("The 1 GiB row is the same bench on a domain of 1 GiB pages (reserved at runtime), run after the "
          "preallocation section.")
        w("")
    w("![Start latency against guest size](img/start-latency.png)")
    w("")
    if os.path.exists(os.path.join(work, "warm.jsonl")):
        w("The warm-start line: `scripts/bench-warm` run by `scripts/bench` at the same sizes, the median of its "
          "starts taking a warm set of the pool (one cell, fork to exit; see the warm pool's section below).")
        w("")
    w("qlaunch's phases (median ms; `timings_ms` of `start --json`, see docs/usage.md), and what the whole start adds "
      "to the kernel's own limit (total − kernel). That difference holds qlaunch's own work (parse to preflight, "
      "the memfds and the fork in spawn, cont) and QEMU's start-up (`qmp_ready`), which the population overlaps but "
      "which, with both CPUs of this host filling memory, takes CPU time from it; the two cannot be told apart by "
      "subtraction:")
    w("")
    phases = ["startup", "cli", "parse", "topology", "probe", "plan", "preflight", "pool_lock", "memfd", "spawn",
              "qmp_ready", "prealloc", "unmap", "cont", "hand_over", "return", "exit", "total", "unaccounted"]
    w("| GiB | " + " | ".join(phases) + " | floor | total − kernel | total − (floor + kernel) |")
    w("|---:|" + "---:|" * (len(phases) + 3))
    for (s, c), b in starts.items():
        vals = [phase_median(b, p) for p in phases]
        total, kernel = phase_median(b, "total"), starter(b, "kernel")
        over = total - kernel if None not in (total, kernel) else None
        w(f"| {s} | " + " | ".join(fmt_ms(v) for v in vals) + f" | {fmt_ms(starter(b, 'floor'))} | {fmt_ms(over)} | "
          f"{fmt_ms(b.get('differences_ms', {}).get('total - (floor + kernel)'))} |")
    w("")
    w("The phases run from the bench's fork of `qlaunch start` (`startup`: until qlaunch's first static "
      "initialiser) to its exit (`exit`: after the last mark), so they add up to the whole run; `unaccounted` is what "
      "no phase holds (docs/usage.md says what each phase is). `floor` is QEMU's own start-up: the same plain QEMU "
      "argv with the guest's memory cut to one page per cell, exec until it answers `qmp_capabilities`.")
    w("")
    for line in overlap_table(starts, "qlaunch bench --json --runs N --against virsh,qemu,kernel,floor,overlap DOMAIN.xml"):
        w(line)
    for (s, c), b in starts.items():
        if b.get("skipped"):
            w(f"Skipped at {s} GiB: " + "; ".join(f"{n} ({why})" for n, why in b["skipped"]))
            w("")
    w("On this host (one NUMA node, two CPUs) QEMU 7.2 filling its two backends one after the other with two threads "
      "each is already close to the kernel's limit, so qlaunch's preallocator gains little over plain QEMU here: it "
      "saves QEMU's sequential start (the fill overlaps QEMU's start-up) but shares the same two CPUs with it. Its "
      "real gain is on hosts with several nodes, where QEMU fills one node's backend at a time with that node's CPUs "
      "while every other node idles, and qlaunch fills all of them at once (the NUMA lab checks where the pages land; "
      "this host cannot time it).")
    w("")
    planfile = sorted(glob.glob(os.path.join(work, "plan-*.json")))
    if planfile:
        plan = json.load(open(planfile[-1]))
        w("Why auto picked what it picked (`domxml-to-native --format json`, `prealloc_reason`):")
        w("")
        for bk in plan["backends"]:
            w(f"- `{bk['id']}`: {bk['prealloc']} — {bk.get('prealloc_reason', '')}")
        w("")

    # ---- 2. run-early
    w("## 2. `--run-early`: a guest that runs while its memory fills")
    w("")
    w("`qlaunch bench --json --runs N --against kernel,floor,floor-sized DOMAIN.xml -- --run-early`: the same XMLs; "
      "`running` is when QEMU said the guest runs, `populated` when the last page was in (both ms since the bench "
      "forked qlaunch), total is fork to exit. `floor at size` is the floor with the domain's memory as it is, "
      "allocated on demand (`floor-sized`): QEMU's own start-up at this size.")
    w("")
    w("| GiB | running | floor | running − floor | floor at size | running − floor at size | populated | "
      "total (min–max) | kernel | total / kernel |")
    w("|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    for (s, c), b in earlies.items():
        diffs = b.get('differences_ms', {})
        w(f"| {s} | **{fmt_ms(phase_median(b, 'running'))}** | {fmt_ms(starter(b, 'floor'))} | "
          f"{fmt_ms(diffs.get('running - floor'))} | {fmt_ms(starter(b, 'floor-sized'))} | "
          f"{fmt_ms(diffs.get('running - floor-sized'))} | {fmt_ms(phase_median(b, 'populated'))} | "
          f"{fmt_ms(starter(b, 'qlaunch'))} ({fmt_ms(starter(b, 'qlaunch', 'min'))}–{fmt_ms(starter(b, 'qlaunch', 'max'))}) | "
          f"{fmt_ms(starter(b, 'kernel'))} | {fmt_r(b['ratios'].get('qlaunch/kernel'))} |")
    w("")
    w("Time to running is QEMU's start-up and `cont`: the fill is not in it. Where it grows with the size (the "
      "running − floor column), compare the floor at size: QEMU alone, with the same memory mapped and nothing "
      "preallocated, takes that much longer too. Under TCG it is flat; under KVM it has grown with the size on "
      "the machines measured (a nested KVM, `kvm_pvm`, `tdp_mmu=N`), so running − floor at size is what qlaunch "
      "and `cont` add there. That growth is the host kernel's: QEMU's `KVM_SET_USER_MEMORY_REGION` calls took 28 ms "
      "at 16 GiB against 7 ms at 4 MiB (`strace -T`, plain memfds, nothing touched), KVM setting up per-page "
      "data for each memory slot, the 3 GiB below 4 GiB registered twice by the `pc` machine. With `--run-early` "
      "the workers start once "
      "QEMU has answered QMP, so that QEMU's start-up has the CPUs (started before QEMU, as without "
      "`--run-early`, they made the guest run later the more memory there was to fill: about 80 ms at 2 GiB, "
      "105 ms at 16 GiB). The total does not reach the kernel's limit on this host: once resumed, the guest's "
      "vCPU (SeaBIOS, seen at 100 % of a CPU) competes with the two filling workers for the "
      "only two CPUs. On a host with CPUs to spare for the vCPUs, the fill keeps its speed; on this one, "
      "`--run-early` buys a running guest at the price of a later full one.")
    w("")

    L.extend(tcg_section(tcg_starts, tcg_earlies, "2b"))

    # ---- 3. prealloc
    w("## 3. Preallocation throughput")
    w("")
    w("`qlaunch prealloc --size N --page-size 2M|1G --threads T --json` against `populate_ref` (prealloc/bench/"
      "populate_ref.c, built by CMake): one memfd, mapped shared, populated with `MADV_POPULATE_WRITE` on equal "
      "slices, one per thread, no pinning, no NUMA policy. Both timed as whole processes (fork to exit). Interleaved, "
      f"the order alternating every round, {reps} rounds; 2 MiB pages from the reserved, warmed pool, 1 GiB pages "
      "reserved at runtime after it, warmed once. The thread sweep runs from 1 to every CPU of the host (two here; "
      "the sweep is there for bigger hosts). Ratio = qlaunch time / reference time, per round, median.")
    w("")
    w("| pages | GiB | threads | qlaunch prealloc ms (GiB/s) | populate_ref ms (GiB/s) | ratio |")
    w("|---|---:|---:|---:|---:|---:|")
    for (page, gib, t), v in sorted(pre.items()):
        q, r = med(list(v["qlaunch"].values())), med(list(v["ref"].values()))
        cq = f"{fmt_ms(q)} ({gib / q * 1000:.2f})" if q else "—"
        cr = f"{fmt_ms(r)} ({gib / r * 1000:.2f})" if r else "—"
        w(f"| {page} | {gib} | {t} | {cq} | {cr} | {fmt_r(paired(v['qlaunch'], v['ref']))} |")
    w("")
    if pre:
        w("![Preallocation throughput against threads](img/prealloc-throughput.png)")
        w("")

    # ---- 4. planner
    w("## 4. Planner speed")
    w("")
    if planner:
        w("`build/qlaunch_planner_bench` (`tests/bench/planner_bench.cc`, Google Benchmark): `qemu::PlanLaunch` for a "
          "64-node host and a domain with 128 guest cells and 128 pc-dimms (256 hugepage memfd backends), and for scale "
          "the two-cell shape on a two-node host. Median of the repetitions; CPU time is the figure to read:")
        w("")
        w("| benchmark | wall time | CPU time |")
        w("|---|---:|---:|")
        rows = {}
        for b in planner["benchmarks"]:
            if b.get("aggregate_name") == "median" or (b.get("run_type") == "iteration" and b["run_name"] not in rows):
                rows[b["run_name"]] = b
        for name, b in rows.items():
            unit = {"us": "µs"}.get(b["time_unit"], b["time_unit"])
            w(f"| {name} | {b['real_time']:.1f} {unit} | {b['cpu_time']:.1f} {unit} |")
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
    machine = json.load(open(os.path.join(args.work, "machine.json")))
    planner = json.load(open(os.path.join(args.work, "planner.json")))
    starts, earlies = load_benches(args.work, "start"), load_benches(args.work, "early")
    gigantic = load_benches(args.work, "start1g")
    pre = prealloc_results(args.work)
    img = os.path.join(args.out, "img")
    os.makedirs(img, exist_ok=True)
    if starts:
        plot_start(starts, os.path.join(img, "start-latency.png"), args.work, warm_results(args.work))
    if pre:
        plot_prealloc(pre, os.path.join(img, "prealloc-throughput.png"), args.work)
    doc_path = os.path.join(args.out, "benchmarks.md")
    kept = hand_written_sections(doc_path)  # other scripts' sections stay, after the generated ones
    doc = write_doc(machine, starts, earlies, gigantic, pre, planner, args.work,
                    load_benches(args.work, "tcg-start"), load_benches(args.work, "tcg-early"))
    with open(doc_path, "w") as f:
        f.write(doc + ("\n\n" + kept if kept else "") + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
