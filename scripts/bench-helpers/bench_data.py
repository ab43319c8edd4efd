"""What report.py and floor_report.py read from the raw results of scripts/bench, and how they print numbers."""
import glob
import json
import os
import re
import statistics


def med(xs):
    return statistics.median(xs) if xs else None


def fmt_ms(x):
    return "—" if x is None else f"{x:.0f}" if x >= 100 else f"{x:.1f}"


def fmt_r(x):
    return "—" if x is None else f"{x:.2f}"


def verdict(value, limit):
    return "—" if value is None else ("met" if value <= limit else "**not met**")


def load_benches(work, prefix):
    out = {}
    for path in glob.glob(os.path.join(work, prefix + "-*g-*c.json")):
        m = re.search(r"-(\d+)g-(\d+)c\.json$", path)
        out[(int(m.group(1)), int(m.group(2)))] = json.load(open(path))
    return dict(sorted(out.items()))


def starter(b, name, key="median"):
    s = b["starters"].get(name)
    return s[key] if s else None


def phase_median(b, phase):  # qlaunch bench --json gives the median of every phase over the rounds
    return b["qlaunch_phases"].get(phase)

