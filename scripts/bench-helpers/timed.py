#!/usr/bin/env python3
"""timed.py OUT.jsonl KEYS_JSON COMMAND...: runs COMMAND (its stdout captured, so no reader competes
for the CPUs while it runs), times it from spawn to exit on the monotonic clock, and appends
KEYS_JSON + {"ms": wall, "rc": exit code, "result": its stdout parsed as JSON, or null} to OUT.jsonl."""
import json
import subprocess
import sys
import time

out, keys, argv = sys.argv[1], json.loads(sys.argv[2]), sys.argv[3:]
t0 = time.monotonic_ns()
p = subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
keys["ms"] = round((time.monotonic_ns() - t0) / 1e6, 3)
keys["rc"] = p.returncode
try:
    keys["result"] = json.loads(p.stdout)
except ValueError:
    keys["result"] = None
if p.returncode != 0:
    sys.stderr.write(p.stderr)
with open(out, "a") as f:
    f.write(json.dumps(keys) + "\n")
sys.exit(0 if p.returncode == 0 else 1)
