#!/usr/bin/env python3
"""machine.py OUT.json ACCEL COMMAND QUICK REPS DROPPED_SIZES: what scripts/bench ran on (stdlib only)."""
import json
import os
import platform
import subprocess
import sys
import time


def sh(cmd):
    try:
        return subprocess.run(cmd, shell=True, capture_output=True, text=True).stdout.strip()
    except Exception:
        return ""


lscpu = dict(l.split(":", 1) for l in sh("LC_ALL=C lscpu").splitlines() if ":" in l)
mem_kib = int(sh("awk '/MemTotal/ {print $2}' /proc/meminfo") or 0)
info = {
    "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
    "cpu": lscpu.get("Model name", "?").strip(),
    "cpus": os.cpu_count(),
    "sockets": lscpu.get("Socket(s)", "?").strip(),
    "hypervisor": lscpu.get("Hypervisor vendor", "").strip(),
    "numa_nodes": lscpu.get("NUMA node(s)", "?").strip(),
    "memory_gib": round(mem_kib / 2**20, 1),
    "kernel": platform.release(),
    "os": sh(". /etc/os-release && echo $PRETTY_NAME"),
    "qemu": sh("qemu-system-x86_64 --version | head -n1"),
    "libvirt": sh("libvirtd --version"),
    "accel": sys.argv[2],
    "command": sys.argv[3],
    "quick": sys.argv[4] == "1",
    "reps": int(sys.argv[5]),
    "dropped_sizes": sys.argv[6].split(),
    "commit": sh("git rev-parse --short HEAD") + (" (with uncommitted changes)" if sh("git status --porcelain") else ""),
    "loadavg_start": sh("cut -d' ' -f1-3 /proc/loadavg"),
}
json.dump(info, open(sys.argv[1], "w"), indent=1)
