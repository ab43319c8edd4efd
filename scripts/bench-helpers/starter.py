#!/usr/bin/env python3
"""Start-latency helper for scripts/bench (stdlib only). Prints one JSON object per call.

  starter.py cmd -- COMMAND...
      Runs COMMAND, times it from spawn to exit (monotonic clock), and prints
      {"ms": wall, "rc": exit code, "stdout": its stdout}. Used for qlaunch start and virsh create.

  starter.py qemu ARGV_FILE WORKDIR
      Plain QEMU by hand: ARGV_FILE holds the argv one argument per line (as
      `qlaunch domxml-to-native --format lines` prints it, with -S and a QMP chardev). The QMP
      socket path is replaced by WORKDIR/qmp.sock. Times from exec to the moment `cont` is
      acknowledged and `query-status` says running, then quits QEMU over QMP and waits until it
      has exited (untimed). Prints {"ms": spawn_to_running, "rc": 0, "pid": PID}.
"""
import json
import os
import socket
import subprocess
import sys
import time

TIMEOUT_S = float(os.environ.get("BENCH_QMP_TIMEOUT_S", "120"))


def now_ms():
    return time.monotonic_ns() / 1e6


def run_cmd(argv):
    t0 = now_ms()
    p = subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    ms = now_ms() - t0
    if p.returncode != 0:
        sys.stderr.write(p.stderr)
    print(json.dumps({"ms": round(ms, 3), "rc": p.returncode, "stdout": p.stdout.strip()}))
    return 0 if p.returncode == 0 else 1


class Qmp:
    def __init__(self, path, proc, deadline):
        self.buf = b""
        while True:
            try:
                self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
                self.sock.connect(path)
                break
            except (FileNotFoundError, ConnectionRefusedError):
                self.sock.close()
                if proc.poll() is not None:
                    raise RuntimeError(f"QEMU exited with {proc.returncode} before QMP answered")
                if time.monotonic() > deadline:
                    raise RuntimeError("QMP socket never appeared")
                time.sleep(0.001)
        self.sock.settimeout(max(1.0, deadline - time.monotonic()))
        self.greeting = self.read()

    def read(self):
        while b"\n" not in self.buf:
            chunk = self.sock.recv(65536)
            if not chunk:
                raise RuntimeError("QMP connection closed")
            self.buf += chunk
        line, self.buf = self.buf.split(b"\n", 1)
        return json.loads(line)

    def execute(self, cmd, args=None):
        msg = {"execute": cmd}
        if args:
            msg["arguments"] = args
        self.sock.sendall(json.dumps(msg).encode() + b"\n")
        while True:
            reply = self.read()
            if "event" in reply:
                continue
            if "error" in reply:
                raise RuntimeError(f"{cmd}: {reply['error']}")
            return reply["return"]


def run_qemu(argv_file, workdir):
    with open(argv_file) as f:
        argv = [line.rstrip("\n") for line in f if line.strip()]
    sock = os.path.join(workdir, "qmp.sock")
    if os.path.exists(sock):
        os.unlink(sock)
    for i, a in enumerate(argv):
        if a.startswith("socket,id=qmp,"):
            parts = [("path=" + sock) if p.startswith("path=") else p for p in a.split(",")]
            argv[i] = ",".join(parts)
    log = open(os.path.join(workdir, "qemu.log"), "ab")
    deadline = time.monotonic() + TIMEOUT_S
    t0 = now_ms()
    proc = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=log, stderr=log)
    try:
        qmp = Qmp(sock, proc, deadline)
        qmp.execute("qmp_capabilities")
        qmp.execute("cont")
        status = qmp.execute("query-status")
        ms = now_ms() - t0
        if status.get("status") != "running":
            raise RuntimeError(f"query-status says {status}")
        try:
            qmp.execute("quit")
        except (RuntimeError, OSError):
            pass
        proc.wait(timeout=60)
    except BaseException as e:
        proc.kill()
        proc.wait()
        sys.stderr.write(f"starter.py qemu: {e}\n")
        return 1
    print(json.dumps({"ms": round(ms, 3), "rc": 0, "pid": proc.pid}))
    return 0


def main():
    if len(sys.argv) >= 3 and sys.argv[1] == "cmd" and sys.argv[2] == "--":
        return run_cmd(sys.argv[3:])
    if len(sys.argv) == 4 and sys.argv[1] == "qemu":
        return run_qemu(sys.argv[2], sys.argv[3])
    sys.stderr.write(__doc__)
    return 2


if __name__ == "__main__":
    sys.exit(main())
