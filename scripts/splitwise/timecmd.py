"""Run a command N times and print one CSV row per run: wall_s,cpu_s
(user + sys of the command and everything it started, from wait4's
rusage; the kernel's user/sys split is by ticks, their sum is exact).

Usage: /usr/bin/python3 timecmd.py N CMD [ARG...]   (the command's stdout
is discarded, its stderr kept)
"""
import os
import subprocess
import sys
import time

n = int(sys.argv[1])
cmd = sys.argv[2:]
for _ in range(n):
    t0 = time.perf_counter()
    p = subprocess.Popen(cmd, stdout=subprocess.DEVNULL)
    _, status, ru = os.wait4(p.pid, 0)
    wall = time.perf_counter() - t0
    if status != 0:
        sys.exit("timecmd: %s exited with status %d" % (cmd[0], status))
    print("%.6f,%.6f" % (wall, ru.ru_utime + ru.ru_stime), flush=True)
