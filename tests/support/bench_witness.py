#!/usr/bin/python3
"""bench_witness.py MODE REAL LOG ARGS...: stands in for a program `qlaunch bench` runs (tests/bench_command_test.cc)
and appends what it saw from outside the bench, with times of CLOCK_MONOTONIC in ns (the clock of the bench's
"runs_clock_ns"), as one JSON line to LOG.

  populate  runs REAL ARGS (populate_ref) to its exit: {"what": "populate", "start", "exit", "rc"}.
  qemu      runs REAL ARGS (QEMU). When its QMP socket (-chardev socket,id=qmp,path=P) is in a bench directory
            (qlaunch-bench-*), QEMU gets P.real instead and this stands between the bench and QEMU on P,
            passing every byte on: {"what": "qmp", "dir": the starter's directory, "start", "greeting" (QEMU's
            greeting passed on), "asked" (qmp_capabilities received from the bench), "answered" (QEMU's reply to
            it received, before it is passed on), "exit"}. Any other QEMU (qlaunch's, a probe) is exec'd as it is.
"""
import ctypes
import json
import os
import re
import select
import signal
import socket
import sys
import time


def now():
    return time.monotonic_ns()


def log(path, record):
    fd = os.open(path, os.O_WRONLY | os.O_APPEND)
    os.write(fd, (json.dumps(record) + "\n").encode())
    os.close(fd)


def exit_like(status):
    if os.WIFSIGNALED(status):
        signal.signal(os.WTERMSIG(status), signal.SIG_DFL)
        os.kill(os.getpid(), os.WTERMSIG(status))
    sys.exit(os.waitstatus_to_exitcode(status))


def spawn(argv):
    pid = os.fork()
    if pid == 0:
        ctypes.CDLL(None).prctl(1, 9)  # PR_SET_PDEATHSIG, SIGKILL: the bench kills this process, QEMU goes too
        try:
            os.execv(argv[0], argv)
        finally:
            os._exit(127)
    return pid


def populate(real, path, args):
    start = now()
    pid = spawn([real] + args)
    _, status = os.waitpid(pid, 0)
    log(path, {"what": "populate", "start": start, "exit": now(), "rc": os.waitstatus_to_exitcode(status)})
    exit_like(status)


def qemu(real, path, args):
    sock = None
    for i, a in enumerate(args):
        m = re.match(r"socket,id=qmp,path=([^,]*/qlaunch-bench-[^,/]+/([^,/]+)/[^,/]+),", a)
        if i and args[i - 1] == "-chardev" and m:
            sock, starter = m.group(1), m.group(2)
            args[i] = a.replace("path=" + sock + ",", "path=" + sock + ".real,", 1)
    if sock is None:
        os.execv(real, [real] + args)
    record = {"what": "qmp", "dir": starter, "start": now()}
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(sock)
    listener.listen(1)
    pid = spawn([real] + args)
    status = None
    bench = upstream = None
    try:
        bench, _ = listener.accept()
        while upstream is None:
            try:
                upstream = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
                upstream.connect(sock + ".real")
            except OSError:
                upstream = None
                done, how = os.waitpid(pid, os.WNOHANG)
                if done:
                    status = how
                    break
                time.sleep(0.001)
        from_qemu = b""
        while upstream is not None:
            ready, _, _ = select.select([bench, upstream], [], [])
            if upstream in ready:
                data = upstream.recv(65536)
                if not data:
                    break
                from_qemu += data
                while b"\n" in from_qemu:
                    line, from_qemu = from_qemu.split(b"\n", 1)
                    if "greeting" not in record and b'"QMP"' in line:
                        record["greeting"] = now()
                    elif "asked" in record and "answered" not in record and b'"return"' in line:
                        record["answered"] = now()
                bench.sendall(data)
            if bench in ready:
                data = bench.recv(65536)
                if not data:
                    break
                if "asked" not in record and b"qmp_capabilities" in data:
                    record["asked"] = now()
                upstream.sendall(data)
    finally:
        for s in (bench, upstream, listener):
            if s is not None:
                s.close()
        if status is None:
            _, status = os.waitpid(pid, 0)
        record["exit"] = now()
        log(path, record)
    exit_like(status)


if __name__ == "__main__":
    mode, real, path, args = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4:]
    {"populate": populate, "qemu": qemu}[mode](real, path, args)
