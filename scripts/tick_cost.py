#!/usr/bin/env python3
"""What one `livenote tick` costs on a folder of N notes (docs/scaling.md).

    cargo build --release -p livenote
    python3 scripts/tick_cost.py [--bin target/release/livenote] [--notes 1000 10000] [--repeat 7]

For each size: a vault from scripts/gen_vault.py (10 % live notes, each with `lastRunAt` a day
ahead, so nothing is due), trusted in a scratch data folder, with a `command` provider that
prints one line. Then `livenote tick -q` is timed `--repeat` times with nothing due, and as many
times with 5 notes made due before each tick (a cron note that never ran). Prints one row per
case: the median and the worst wall time, the median CPU (user + system) and the peak RSS.
The page cache is warm (a tick that runs every minute finds it so).
"""
import argparse
import datetime
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
DUE = "---\nlive:\n  objective: say ok\n  triggers:\n    cronExpr: \"0 * * * *\"\n---\n# Due {k}\n"


def run_tick(binary, vault, env):
    """One tick: wall time, CPU (user + system) and peak RSS (MiB) of that process alone."""
    start = time.perf_counter()
    child = subprocess.Popen([binary, "-q", "tick", vault], env=env, stdout=subprocess.DEVNULL,
                             stderr=subprocess.PIPE)
    _, status, usage = os.wait4(child.pid, 0)
    wall = time.perf_counter() - start
    err = child.stderr.read().decode(errors="replace")
    child.stderr.close()
    child.returncode = os.waitstatus_to_exitcode(status)
    if child.returncode != 0:
        sys.exit(f"tick exited {child.returncode}: {err}")
    return wall, usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024


def measure(binary, notes, repeat):
    scratch = tempfile.mkdtemp(prefix="tick-cost-")
    try:
        vault = os.path.join(scratch, "vault")
        data = os.path.join(scratch, "data")
        ahead = (datetime.datetime.now(datetime.timezone.utc) + datetime.timedelta(days=1)).strftime(
            "%Y-%m-%dT%H:%M:%S.000Z")
        subprocess.run([sys.executable, os.path.join(HERE, "gen_vault.py"), vault, "--notes", str(notes),
                        "--ran-at", ahead], check=True, stdout=subprocess.DEVNULL)
        with open(os.path.join(vault, ".livenote.toml"), "w") as f:
            f.write('[agent]\nprovider = "p"\n[providers.p]\nkind = "command"\ncommand = ["echo", "ok"]\n')
        env = dict(os.environ, LIVENOTE_DATA_DIR=data, LIVENOTE_CONFIG_DIR=data)
        env.pop("LIVENOTE_LOG", None)
        subprocess.run([binary, "trust", vault], env=env, check=True, stdout=subprocess.DEVNULL)
        # Warms the page cache, and makes sure that nothing in the vault is due.
        warm = subprocess.run([binary, "tick", vault], env=env, capture_output=True, text=True)
        if ": 0 notes fired, 0 events processed" not in warm.stderr:
            sys.exit(f"the vault is not quiet: {warm.stderr[-2000:]}")
        rows = []
        for due in (0, 5):
            walls, cpus, rss = [], [], []
            for _ in range(repeat):
                for k in range(due):
                    with open(os.path.join(vault, f"due-{k}.md"), "w") as f:
                        f.write(DUE.format(k=k))
                wall, cpu, peak = run_tick(binary, vault, env)
                walls.append(wall)
                cpus.append(cpu)
                rss.append(peak)
            rows.append((notes, due, statistics.median(walls), max(walls), statistics.median(cpus), max(rss)))
        return rows
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bin", default=os.path.join(HERE, "..", "target", "release", "livenote"))
    ap.add_argument("--notes", type=int, nargs="+", default=[1000, 10000])
    ap.add_argument("--repeat", type=int, default=7)
    a = ap.parse_args()
    binary = os.path.abspath(a.bin)
    print(f"load average before: {os.getloadavg()}")
    print("notes | due | wall median (ms) | wall max (ms) | CPU median (ms) | peak RSS (MiB)")
    for n in a.notes:
        for notes, due, wall, worst, cpu, rss in measure(binary, n, a.repeat):
            print(f"{notes} | {due} | {wall * 1000:.0f} | {worst * 1000:.0f} | {cpu * 1000:.0f} | {rss:.1f}")
    print(f"load average after: {os.getloadavg()}")


if __name__ == "__main__":
    main()
