"""Issue 22's part of docs/benchmarks.md: a start's fixed cost against QEMU's own floor.

floor_target_rows() gives the rows of the Targets table for one accelerator's results; overlap_table() the start
bench against the kernel, the floor and the two run together; tcg_section() the section that repeats the
start-latency and --run-early benches under TCG on a machine whose main run had KVM (the issue's figures and targets
were set under TCG; under KVM, QEMU's own start-up grows with the guest's size).
"""
from bench_data import fmt_ms, fmt_r, med, phase_median, starter, verdict

EARLY_OVER_FLOOR_MS = 15      # --run-early: running - floor, every size
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


def floor_target_rows(starts, earlies, accel=""):
    """The Targets rows of issue 22 for one accelerator's benches; `accel` labels them when there are two."""
    tag = f" ({accel})" if accel else ""
    rows = []
    for (s, c), b in earlies.items():
        v = b.get("differences_ms", {}).get("running - floor")
        rows.append(f"| `--run-early`: running − QEMU floor ≤ {EARLY_OVER_FLOOR_MS} ms at {s} GiB{tag} | {fmt_ms(v)} ms | "
                    f"{verdict(v, EARLY_OVER_FLOOR_MS)} |")
    for (s, c), b in starts.items():
        if s == 8:
            v = over_sum_ratio(b)
            rows.append(f"| `start`: total / (kernel + floor) ≤ {START_OVER_SUM_RATIO} at {s} GiB{tag} | {fmt_r(v)} | "
                        f"{verdict(v, START_OVER_SUM_RATIO)} |")
            v = overlap_ratio(b)
            if v is not None:
                rows.append(f"| `start`: the host's own limit for it, overlap / (kernel + floor), at {s} GiB{tag} | "
                            f"{fmt_r(v)} | reference |")
            v = b.get("differences_ms", {}).get("total - (floor + kernel)")
            rows.append(f"| `start`: total − (floor + kernel) ≤ {START_OWN_SHARE_MS} ms at {s} GiB{tag} | {fmt_ms(v)} ms | "
                        f"{verdict(v, START_OWN_SHARE_MS)} |")
    for (s, c), b in list(starts.items()) + list(earlies.items()):
        v = phase_median(b, "unaccounted")
        if v is not None:
            early = " (--run-early)" if b in earlies.values() else ""
            rows.append(f"| unaccounted < {UNACCOUNTED_MS} ms at {s} GiB{early}{tag} | {v:.3f} ms | "
                        f"{verdict(abs(v), UNACCOUNTED_MS)} |")
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
