"""One sitting: two or more worker builds measured in interleaved rounds on one stack (see
bench/README.md, "Comparing builds").

Each round runs one h2load round against the mock (4 x 250, the ceiling every ratio uses), then
each build's worker on the same jobs, in an order that alternates from round to round. A figure is
read as the worker's steady CPU per notification over h2load's CPU per request of its own round,
and two builds are compared round by round: the host's speed drifts between rounds and between
runs, which moves every figure of a round together.

    scripts/sitting [--rounds N] [--tokens N] [--per-job 1,100] [--together] [--kafka-only] NAME=BINARY ...

A BINARY may be followed by `|VAR=value` assignments for that build's worker alone (for example an
allocator setting: `d10s=.build/release/pushline|MALLOC_CONF=dirty_decay_ms:10000`).

`--together` runs the builds' workers at the same time instead, each on jobs of its own, and reads
each one's CPU per notification over the window in which all of them are sending: from the first
sample after every worker sent its first notification to the last sample before any finished.
Whatever the host does in that window (its speed drifting, a neighbour's load) it does to every
build alike, so the ratio of two builds holds within a few percent where rounds run one after the
other spread over ±15%. The figures are not comparable to a lone worker's: the builds share the
cores, the mock and the broker.

`--kafka-only` gives every job a deadline long past, as the bench's Kafka part does: each token
ends `expired` at once and nothing goes to APNs, so a figure is the Kafka side alone (consume,
decode, results produced and acknowledged).
"""
import argparse
import contextlib
import json
import os
import statistics
import sys
import time

import bench
from bench import RUN, Stack, h2load, log, proc_stats
from prometheus import scrape, total


def parse_build(text):
    name, _, spec = text.partition("=")
    if not name or not spec:
        raise argparse.ArgumentTypeError(f"expected NAME=BINARY, got {text!r}")
    binary, *assignments = spec.split("|")
    if not os.access(binary, os.X_OK):
        raise argparse.ArgumentTypeError(f"{binary}: not an executable")
    return name, os.path.abspath(binary), dict(assignment.partition("=")[::2] for assignment in assignments)


@contextlib.contextmanager
def worker_environment(environment):
    """The process environment with a build's `|VAR=value` assignments, for starting its worker."""
    saved = dict(os.environ)
    os.environ.update(environment)
    try:
        yield
    finally:
        os.environ.clear()
        os.environ.update(saved)


def run_build(stack, name, binary, environment, label, tokens, per_job, deadline=None):
    bench.WORKER_BIN = binary
    with worker_environment(environment):
        return stack.worker_run(label, tokens, per_job, deadline=deadline)


def run_together(stack, builds, label, tokens, per_job, deadline=None):
    """Runs every build's worker at once, each on `tokens` of its own; returns each build's CPU per
    notification over the window in which all of them were sending (see the module's text)."""
    runs = []
    for name, binary, environment in builds:
        run_name = f"{label}{name}"
        _, config, port, jobs = stack.preload(run_name, tokens, per_job, deadline=deadline)
        runs.append({"name": name, "binary": binary, "environment": environment, "config": config, "port": port,
                     "jobs": jobs, "run_name": run_name})
    for run in runs:
        with worker_environment(run["environment"]):
            run["worker"] = stack.start_worker(run["config"], run["port"], name=run["run_name"], binary=run["binary"])
    # One row per sample: each worker's (notifications sent, jobs done, CPU seconds), read together,
    # and when (the scrapes make a sample's interval longer than the sleep).
    samples, times = [], []
    begin = time.time()
    while time.time() - begin < 900:
        time.sleep(0.25)
        row = []
        for run in runs:
            metrics = scrape(f"127.0.0.1:{run['port']}")
            sent = total(metrics, "pushline_notifications_total") if metrics else 0
            done = total(metrics, "pushline_jobs_total") if metrics else 0
            row.append((sent, done, proc_stats(run["worker"].pid)[0]))
        samples.append(row)
        times.append(time.time())
        if all(done >= run["jobs"] for run, (_, done, _) in zip(runs, row)):
            break
    for run in runs:
        run["worker"].stop(timeout=60)
    sending = [index for index, row in enumerate(samples) if all(sent > 0 for sent, _, _ in row)]
    running = [index for index, row in enumerate(samples)
               if all(done < run["jobs"] for run, (_, done, _) in zip(runs, row))]
    if not sending or not running or running[-1] <= sending[0] + 1:
        raise RuntimeError("the workers were never all sending at once")
    # The first sample with every worker sending is left out: its interval held start-ups.
    start, end = sending[0] + 1, running[-1]
    figures = {}
    for index, run in enumerate(runs):
        (sent_start, _, cpu_start), (sent_end, _, cpu_end) = samples[start][index], samples[end][index]
        notifications = sent_end - sent_start
        figures[run["name"]] = {"cpu_us_per_notification": round((cpu_end - cpu_start) / max(1, notifications) * 1e6, 2),
                                "window_notifications": int(notifications),
                                "window_seconds": round(times[end] - times[start], 2)}
    return figures


def main():
    parser = argparse.ArgumentParser(prog="scripts/sitting")
    parser.add_argument("--rounds", type=int, default=4)
    parser.add_argument("--tokens", type=int, default=300_000)
    parser.add_argument("--per-job", default="1", help="comma-separated tokens per job (default 1)")
    parser.add_argument("--together", action="store_true",
                        help="run the builds at the same time, each on jobs of its own (see the module's text)")
    parser.add_argument("--kafka-only", action="store_true",
                        help="jobs past their deadline: the Kafka side alone, nothing sent to APNs")
    parser.add_argument("builds", nargs="+", type=parse_build, metavar="NAME=BINARY")
    options = parser.parse_args()
    per_jobs = [int(value) for value in options.per_job.split(",")]
    deadline = "2000-01-01T00:00:00Z" if options.kafka_only else None
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
                if options.together:
                    figures = run_together(stack, order, f"tog{round_}x{per_job}", options.tokens, per_job, deadline)
                    for name, figure in figures.items():
                        steady = figure["cpu_us_per_notification"]
                        row["builds"][f"{name}/{per_job}"] = {
                            "steady_cpu_us_per_notification": steady, "ratio": round(steady / ceiling, 3),
                            "window_notifications": figure["window_notifications"],
                            "window_seconds": figure["window_seconds"]}
                        log(f"round {round_ + 1}: h2load {ceiling} us/request; {name}, {per_job}/job, together: {steady} "
                            f"us/notification = {steady / ceiling:.3f} x over {figure['window_notifications']:,} "
                            f"notifications in {figure['window_seconds']} s")
                    continue
                for name, binary, environment in order:
                    run = run_build(stack, name, binary, environment, f"sit{round_}{name}{per_job}", options.tokens, per_job,
                                    deadline)
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
            figures = ("ratio", "steady_cpu_us_per_notification") + (() if options.together else ("peak_rss_mb", "allocations_per_notification"))
            summary[key] = {figure: round(statistics.median(cell[figure] for cell in cells), 3) for figure in figures}
            summary[key]["ratios"] = [cell["ratio"] for cell in cells]
            print(f"{key}: ratio to h2load, median {summary[key]['ratio']} (rounds {summary[key]['ratios']})"
                  + ("; together" if options.together else
                     f"; peak RSS {summary[key]['peak_rss_mb']} MB; {summary[key]['allocations_per_notification']} allocations"))
        first = names[0]
        for name in names[1:]:
            against = [round(row["builds"][f"{name}/{per_job}"]["steady_cpu_us_per_notification"]
                             / row["builds"][f"{first}/{per_job}"]["steady_cpu_us_per_notification"], 3) for row in rows]
            median = round(statistics.median(against), 3)
            summary[f"{name}/{first}/{per_job}"] = {"per_round": against, "median": median}
            print(f"{name} / {first}, {per_job}/job, per round: {against}, median {median}")
    path = os.path.join(RUN, "sitting.json")
    with open(path, "w") as handle:
        json.dump({"together": options.together, "rounds": rows, "summary": summary}, handle, indent=2)
    log(f"sitting: {path}")


if __name__ == "__main__":
    sys.exit(main())
