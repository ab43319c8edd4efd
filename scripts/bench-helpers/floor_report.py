"""Issue 22's part of docs/benchmarks.md: a start's fixed cost against QEMU's own floor.

floor_targets() checks issue 22's targets against one accelerator's results (each with its figure, its limit and
whether it is met); floor_target_rows() gives them as the rows of the Targets table for one accelerator's results; overlap_table() the start
bench against the kernel, the floor and the two run together; tcg_section() the section that repeats the
start-latency and --run-early benches under TCG on a machine whose main run had KVM (the issue's figures and targets
were set under TCG; under KVM, QEMU's own start-up grows with the guest's size).
"""
import json
import sys

from bench_data import fmt_ms, fmt_r, med, phase_median, starter

EARLY_OVER_FLOOR_MS = 15      # --run-early: running - floor, every size
START_TARGET_GIB = 8          # the size the two start targets below are set at
START_OVER_SUM_RATIO = 0.95   # start, 8 GiB: total / (kernel + floor), per round
START_OWN_SHARE_MS = 15       # start, 8 GiB: total - (floor + kernel)
UNACCOUNTED_MS = 2            # no phase holds more than this of a start


def per_round(b, names, f):  # the median over rounds of f(one run of each of `names`), None without one of them
    runs = [b["starters"].get(n, {}).get("runs_ms") for n in names]
    return med([f(*r) for r in zip(*runs)]) if all(runs) else None


def over_sum_ratio(b):  # qlaunch / (kernel + floor)
    return per_round(b, ("qlaunch", "kernel", "floor"), lambda q, k, f: q / (k + f))


def overlap_ratio(b):  # overlap / (kernel + floor): the host's own limit for the ratio above
    return per_round(b, ("overlap", "kernel", "floor"), lambda o, k, f: o / (k + f))


BEFORE_FILL = ("startup", "cli", "parse", "topology", "probe", "plan", "preflight", "pool_lock", "memfd")
AFTER_FILL = ("unmap", "cont", "hand_over", "return", "exit")


def serial_ms(b):
    """qlaunch's work before its fill starts and after it ends (phase medians): what a start adds to the overlap."""
    serial = [phase_median(b, p) for p in BEFORE_FILL + AFTER_FILL]
    return None if None in serial else sum(serial)


def overlap_table(starts, command, explain=True):
    """The start-latency bench against the kernel, the floor and the two run together (`overlap`); `explain`: with
    the paragraph that says what the columns are."""
    if not any("overlap" in b["starters"] for b in starts.values()):
        return []
    L = [f"`{command}` (median ms):", "",
         "| GiB | qlaunch start | kernel | floor | overlap | total / (kernel + floor) | overlap / (kernel + floor) | "
         "total / overlap | total − overlap | serial |",
         "|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for (s, c), b in starts.items():
        L.append(f"| {s} | **{fmt_ms(starter(b, 'qlaunch'))}** | {fmt_ms(starter(b, 'kernel'))} | "
                 f"{fmt_ms(starter(b, 'floor'))} | {fmt_ms(starter(b, 'overlap'))} | {fmt_r(over_sum_ratio(b))} | "
                 f"{fmt_r(overlap_ratio(b))} | {fmt_r(b['ratios'].get('qlaunch/overlap'))} | "
                 f"{fmt_ms(b.get('differences_ms', {}).get('total - overlap'))} | {fmt_ms(serial_ms(b))} |")
    L.append("")
    if explain:
        L += ["`overlap` is the kernel reference and the floor started together (populate_ref forked, then the "
              "floor's QEMU at once), timed until both are done: a start with no launcher at all, its fill overlapping "
              "QEMU's start-up on the same CPUs. So overlap / (kernel + floor) is the best this host allows the start "
              "ratio, measured in the same rounds, and total − overlap is what qlaunch adds to it: mostly its serial "
              "work before its fill starts and after it ends (`serial`: the phases `startup` to `memfd` and `unmap` to "
              "`exit`). Ratios and differences are medians of per-round values.", ""]
    return L


def target(text, value, limit, unit, absolute=False):
    """One target: met when the value (its magnitude with `absolute`) is at most the limit; met is None without a
    value, or without a limit (a reference figure)."""
    met = None if value is None or limit is None else (abs(value) if absolute else value) <= limit
    return {"target": text, "value": value, "limit": limit, "unit": unit, "met": met}


def floor_targets(starts, earlies, accel=""):
    """Issue 22's targets for one accelerator's benches ({(GiB, cells): `qlaunch bench --json`}): `starts` against
    kernel, floor (and overlap), `earlies` with -- --run-early against the floor; `accel` labels them when there are
    two."""
    tag = f" ({accel})" if accel else ""
    out = []
    for (s, c), b in earlies.items():
        out.append(target(f"`--run-early`: running − QEMU floor ≤ {EARLY_OVER_FLOOR_MS} ms at {s} GiB{tag}",
                          b.get("differences_ms", {}).get("running - floor"), EARLY_OVER_FLOOR_MS, "ms"))
    for (s, c), b in starts.items():
        if s == START_TARGET_GIB:
            out.append(target(f"`start`: total / (kernel + floor) ≤ {START_OVER_SUM_RATIO} at {s} GiB{tag}",
                              over_sum_ratio(b), START_OVER_SUM_RATIO, "ratio"))
            v = overlap_ratio(b)
            if v is not None:
                out.append(target(f"`start`: the host's own limit for it, overlap / (kernel + floor), at {s} GiB{tag}",
                                  v, None, "ratio"))
            out.append(target(f"`start`: total − (floor + kernel) ≤ {START_OWN_SHARE_MS} ms at {s} GiB{tag}",
                              b.get("differences_ms", {}).get("total - (floor + kernel)"), START_OWN_SHARE_MS, "ms"))
    for early, benches in (("", starts), (" (--run-early)", earlies)):
        for (s, c), b in benches.items():
            v = phase_median(b, "unaccounted")
            if v is None:
                continue
            out.append(target(f"unaccounted < {UNACCOUNTED_MS} ms at {s} GiB{early}{tag}", v, UNACCOUNTED_MS, "ms",
                              True))
    return out


def floor_target_rows(starts, earlies, accel=""):
    """The Targets rows of issue 22 for one accelerator's benches (floor_targets())."""
    rows = []
    for t in floor_targets(starts, earlies, accel):
        if t["unit"] == "ratio":
            value = fmt_r(t["value"])
        else:
            value = f"{t['value']:.3f} ms" if t["target"].startswith("unaccounted") else f"{fmt_ms(t['value'])} ms"
        verdict = "reference" if t["limit"] is None else "—" if t["met"] is None else \
            "met" if t["met"] else "**not met**"
        rows.append(f"| {t['target']} | {value} | {verdict} |")
    return rows


def tcg_section(starts, earlies, number):
    """Section `number`: the start-latency and --run-early benches of sections 1 and 2 again, under TCG."""
    if not (starts or earlies):
        return []
    L = [f"## {number}. The same under TCG", ""]
    w = L.append
    w("This machine has KVM, so sections 1 and 2 ran the domains as `<domain type='kvm'>`. Issue 22 set its "
      "targets on a machine without KVM; the start-latency bench (against the kernel and the floor) and the "
      "`--run-early` bench ran again here with the same XMLs as `<domain type='qemu'>` (TCG), interleaved the same "
      "way. Their targets are in the Targets table, marked (TCG); the columns are those of section 1.")
    w("")
    L.extend(overlap_table(starts, "qlaunch bench --json --runs N --against kernel,floor,overlap DOMAIN.xml", False))
    if earlies:
        w("`qlaunch bench --json --runs N --against kernel,floor,floor-sized DOMAIN.xml -- --run-early`:")
        w("")
        w("| GiB | running | floor | running − floor | floor at size | running − floor at size | total | kernel |")
        w("|---:|---:|---:|---:|---:|---:|---:|---:|")
        for (s, c), b in earlies.items():
            d = b.get("differences_ms", {})
            w(f"| {s} | **{fmt_ms(phase_median(b, 'running'))}** | {fmt_ms(starter(b, 'floor'))} | "
              f"{fmt_ms(d.get('running - floor'))} | {fmt_ms(starter(b, 'floor-sized'))} | "
              f"{fmt_ms(d.get('running - floor-sized'))} | {fmt_ms(starter(b, 'qlaunch'))} | {fmt_ms(starter(b, 'kernel'))} |")
        w("")
    return L


def main(argv):
    """floor_report.py [--gib N] START.json [EARLY.json]: issue 22's targets, as JSON on stdout, for one
    `qlaunch bench --json --against kernel,floor[,overlap]` result and one with `-- --run-early` (against at least the
    floor), both of a domain of N GiB (default START_TARGET_GIB, the size the start targets are set at)."""
    gib = START_TARGET_GIB
    if argv[:1] == ["--gib"]:
        gib, argv = int(argv[1]), argv[2:]
    if not 1 <= len(argv) <= 2:
        sys.exit(main.__doc__)
    starts = {(gib, 0): json.load(open(argv[0]))}
    earlies = {(gib, 0): json.load(open(argv[1]))} if len(argv) > 1 else {}
    json.dump({"targets": floor_targets(starts, earlies)}, sys.stdout, indent=1, ensure_ascii=False)
    print()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
