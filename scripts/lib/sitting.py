"""One sitting: two or more worker builds measured in interleaved rounds on one stack (see
bench/README.md, "Comparing builds").

Each round runs one h2load round against the mock (4 x 250, the ceiling every ratio uses), then
each build's worker on the same jobs, in an order that alternates from round to round. A figure is
read as the worker's steady CPU per notification over h2load's CPU per request of its own round,
and two builds are compared round by round: the host's speed drifts between rounds and between
runs, which moves every figure of a round together.

    scripts/sitting [--rounds N] [--tokens N] [--per-job 1,100] NAME=BINARY NAME=BINARY ...

A BINARY may be followed by `|VAR=value` assignments for that build's worker alone (for example an
allocator setting: `d10s=.build/release/pushline|MALLOC_CONF=dirty_decay_ms:10000`).
"""
import argparse
import json
import os
import statistics
import sys

import bench
from bench import RUN, Stack, h2load, log


def parse_build(text):
    name, _, spec = text.partition("=")
    if not name or not spec:
        raise argparse.ArgumentTypeError(f"expected NAME=BINARY, got {text!r}")
    binary, *assignments = spec.split("|")
    if not os.access(binary, os.X_OK):
        raise argparse.ArgumentTypeError(f"{binary}: not an executable")
    return name, os.path.abspath(binary), dict(assignment.partition("=")[::2] for assignment in assignments)


def run_build(stack, name, binary, environment, label, tokens, per_job):
    saved = dict(os.environ)
    os.environ.update(environment)
    bench.WORKER_BIN = binary
    try:
        return stack.worker_run(label, tokens, per_job)
    finally:
        os.environ.clear()
        os.environ.update(saved)


def main():
    parser = argparse.ArgumentParser(prog="scripts/sitting")
    parser.add_argument("--rounds", type=int, default=4)
    parser.add_argument("--tokens", type=int, default=300_000)
    parser.add_argument("--per-job", default="1", help="comma-separated tokens per job (default 1)")
    parser.add_argument("builds", nargs="+", type=parse_build, metavar="NAME=BINARY")
    options = parser.parse_args()
    per_jobs = [int(value) for value in options.per_job.split(",")]
    names = [name for name, _, _ in options.builds]
    if len(set(names)) != len(names):
        parser.error("each build needs a name of its own")
    rows = []
    stack = Stack(["--max-streams", "1000"])
    try:
        url, headers, payload = stack.mock_request()
        for round_ in range(options.rounds):
            ceiling = h2load(url, 400_000, 4, 250, headers, payload)["client_cpu_us_per_request"]
            row = {"round": round_ + 1, "h2load_cpu_us_per_request": ceiling, "builds": {}}
            order = options.builds if round_ % 2 == 0 else options.builds[::-1]
            for per_job in per_jobs:
                for name, binary, environment in order:
                    run = run_build(stack, name, binary, environment, f"sit{round_}{name}{per_job}", options.tokens, per_job)
                    steady = run["steady_cpu_us_per_notification"]
                    row["builds"][f"{name}/{per_job}"] = {
                        "steady_cpu_us_per_notification": steady, "ratio": round(steady / ceiling, 3),
                        "peak_rss_mb": run["peak_rss_mb"], "allocations_per_notification": run["allocations_per_notification"],
                        "notifications_per_second": run["notifications_per_second"]}
                    log(f"round {round_ + 1}: h2load {ceiling} us/request; {name}, {per_job}/job: {steady} us/notification "
                        f"= {steady / ceiling:.3f} x, peak RSS {run['peak_rss_mb']} MB, "
                        f"{run['allocations_per_notification']} allocations/notification")
            rows.append(row)
    finally:
        stack.close()

    summary = {}
    for per_job in per_jobs:
        for name in names:
            key = f"{name}/{per_job}"
            cells = [row["builds"][key] for row in rows]
            summary[key] = {figure: round(statistics.median(cell[figure] for cell in cells), 3)
                            for figure in ("ratio", "steady_cpu_us_per_notification", "peak_rss_mb", "allocations_per_notification")}
            summary[key]["ratios"] = [cell["ratio"] for cell in cells]
            print(f"{key}: ratio to h2load, median {summary[key]['ratio']} (rounds {summary[key]['ratios']}); "
                  f"peak RSS {summary[key]['peak_rss_mb']} MB; {summary[key]['allocations_per_notification']} allocations")
        first = names[0]
        for name in names[1:]:
            against = [round(row["builds"][f"{name}/{per_job}"]["steady_cpu_us_per_notification"]
                             / row["builds"][f"{first}/{per_job}"]["steady_cpu_us_per_notification"], 3) for row in rows]
            median = round(statistics.median(against), 3)
            summary[f"{name}/{first}/{per_job}"] = {"per_round": against, "median": median}
            print(f"{name} / {first}, {per_job}/job, per round: {against}, median {median}")
    path = os.path.join(RUN, "sitting.json")
    with open(path, "w") as handle:
        json.dump({"rounds": rows, "summary": summary}, handle, indent=2)
    log(f"sitting: {path}")


if __name__ == "__main__":
    sys.exit(main())
