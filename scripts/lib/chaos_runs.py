"""Runs the same chaos rows several times side by side (scripts/lib/chaos.py, each run with its
own stacks under RUN_DIR/runK) and prints one table of every run's rows: the verdicts, the
duplicates, and how long the newcomer took to own partitions. Exits 0 only when every row of every
run passed.

The rows that measure group membership are latency-bound (a mock APNs answering in 50 ms): each
run keeps far less than a core busy, so three side by side take about as long as one.

usage: chaos_runs.py [--runs N] [--run-dir DIR] -- CHAOS_ARGUMENTS...
"""
import argparse
import json
import os
import re
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def owning_seconds(row):
    """The seconds to own partitions a row reports: the newcomer's (scaleout) or the survivor's
    after the departure (leave, crash), as listed in its note."""
    if "join_to_owning_s" in row:
        return [row["join_to_owning_s"]]
    return [float(value) for value in re.findall(r"owned all after ([0-9.]+) s", row.get("note", ""))]


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--run-dir", default=os.path.join(ROOT, ".run/chaos-runs"))
    parser.add_argument("chaos", nargs=argparse.REMAINDER)
    options = parser.parse_args()
    arguments = [argument for argument in options.chaos if argument != "--"]
    started = time.time()
    runs = []
    for index in range(1, options.runs + 1):
        directory = os.path.join(options.run_dir, f"run{index}")
        subprocess.run(["rm", "-rf", directory])
        os.makedirs(directory)
        log = open(os.path.join(directory, "chaos.log"), "w")
        process = subprocess.Popen([sys.executable, os.path.join(ROOT, "scripts/lib/chaos.py"), *arguments, "--run-dir", directory],
                                   stdout=log, stderr=subprocess.STDOUT)
        runs.append((index, directory, process, log))
        # Apart by a few seconds, so that the runs' faults do not all fall in the same second.
        time.sleep(3)
    failed = False
    print(f"chaos runs: {len(runs)} side by side: chaos.py {' '.join(arguments)}")
    print(f"{'run':<5}{'row':<12}{'tokens':>8}{'missing':>9}{'dups':>7}{'bound':>7}{'s':>5}  {'owned after (s)':<20}verdict")
    for index, directory, process, log in runs:
        process.wait()
        log.close()
        try:
            with open(os.path.join(directory, "results.json")) as handle:
                rows = json.load(handle)
        except (OSError, ValueError):
            rows = []
        if not rows or process.returncode != 0:
            failed = True
        if not rows:
            print(f"{index:<5}no results (exit {process.returncode}); log {os.path.join(directory, 'chaos.log')}")
            with open(os.path.join(directory, "chaos.log"), errors="replace") as handle:
                print(handle.read()[-2000:])
            continue
        for row in rows:
            bound = "-" if row.get("bound") is None else row.get("bound")
            owned = ", ".join(f"{value:.1f}" for value in owning_seconds(row)) or "-"
            print(f"{index:<5}{row.get('row', row['scenario'])[:11]:<12}{row['tokens']:>8}{row['missing']:>9}"
                  f"{row['duplicates']:>7}{bound:>7}{row['seconds']:>5}  {owned:<20}{row['verdict']}")
            if row["verdict"] != "PASS":
                print(f"     {row.get('note', '')}")
    print(f"chaos runs: {'FAILED' if failed else 'every row of every run passed'} in {time.time() - started:.0f} s "
          f"(logs and results.json under {options.run_dir})")
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
