"""The benchmark driver behind scripts/bench (see bench/README.md for how to read the output)."""
import argparse
import datetime
import json
import os
import re
import resource
import signal
import subprocess
import sys
import time

from stack import BUNDLE_ID, LocalStack, PortReservation, start_process, stop_process, wait_port
from prometheus import buckets, scrape, total
from latency import LatencyProbe

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
BIN = os.path.join(ROOT, ".build/release/pushline")
# The worker under test; PUSHLINE_WORKER_BIN points the end-to-end parts at another build (the
# mock, enqueue and jwt stay this tree's), to compare two builds on one machine in one sitting.
WORKER_BIN = os.environ.get("PUSHLINE_WORKER_BIN") or BIN
BENCH = os.path.join(ROOT, "bench/.build/release/pushline-bench")
RUN = os.path.join(ROOT, ".run/bench")
CLK_TCK = os.sysconf("SC_CLK_TCK")
PAYLOAD = '{"aps":{"alert":{"title":"Sale","body":"50% off today"},"sound":"default"}}'
# A personalised job's payload (`{{name}}` placeholders, rendered per token from its `vars`):
# about the plain one's size once rendered.
PERSONAL_PAYLOAD = '{"aps":{"alert":{"title":"Hi {{name}}","body":"You have {{count}} new"},"sound":"default"}}'
PARTS = ("ceiling", "transport", "decode", "apns", "kafka", "e2e100", "e2e1", "lanes", "latency", "personalise", "apps")


def log(message):
    print(f"bench: {message}", flush=True)


def h2load(url, requests, connections, streams, headers=(), data=None):
    args = ["h2load", "-n", str(requests), "-c", str(connections), "-m", str(streams)]
    for header in headers:
        args += ["-H", header]
    if data:
        args += ["-d", data]
    # h2load's own CPU: what the children reaped during the run cost (it is the only one).
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    output = subprocess.run(args + [url], capture_output=True, text=True, timeout=600).stdout
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    client_cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    rate = float(re.search(r"finished in [^,]+, ([\d.]+) req/s", output).group(1))
    succeeded = int(re.search(r"(\d+) succeeded", output).group(1))
    return {"requests_per_second": round(rate), "succeeded": succeeded, "requested": requests,
            "connections": connections, "streams": streams,
            "client_cpu_us_per_request": round(client_cpu * 1e6 / max(succeeded, 1), 2)}


def mock_h2load(url, headers, payload, streams=250):
    """h2load against the mock in the ceiling's shape: 400,000 requests over 4 connections of
    `streams` streams (4 x 250 is the ceiling every ratio uses)."""
    return h2load(url, 400_000, 4, streams, headers, payload)


# The end-to-end targets (ratio to the 4 x 250 ceiling) by tokens per job.
RATIO_TARGETS = {100: 0.75, 1: 0.6}


def budget(results, run, per_job, ceiling):
    """What the ratio target leaves the worker. The end-to-end rate is CPU-bound: the worker, the
    mock and the broker share the machine's cores, so at the target rate their CPU per
    notification may sum to at most cores / rate. Less the mock's and the broker's, measured in
    this run, that is the worker's budget. Beside it, the floor: h2load's own CPU per request
    against the same mock (a C client doing nothing but HTTP/2) plus the worker's Kafka-only
    steady CPU per result (measured at 100 tokens per job)."""
    target = RATIO_TARGETS[per_job]
    cores = os.cpu_count()
    allowed = cores * 1e6 / (target * ceiling) - run["mock_cpu_us_per_notification"] - run["broker_cpu_us_per_notification"]
    entry = {"ratio_target": target, "worker_cpu_us_allowed": round(allowed, 2),
             "worker_cpu_us_measured": run["cpu_us_per_notification"]}
    client = results.get("ceiling_mock", {}).get("client_cpu_us_per_request")
    kafka = results.get("kafka_only", {}).get("steady_cpu_us_per_notification")
    if client is not None and kafka is not None:
        entry.update({"h2load_cpu_us_per_request": client, "kafka_only_cpu_us_per_result": kafka,
                      "floor_cpu_us": round(client + kafka, 2)})
    log(f"  budget at {target} of the ceiling: {cores} cores / ({target} x {ceiling:,}/s) - mock - broker = "
        f"{entry['worker_cpu_us_allowed']} us of worker CPU per notification (measured {entry['worker_cpu_us_measured']}"
        + (f"; h2load + Kafka alone: {entry['floor_cpu_us']}" if "floor_cpu_us" in entry else "") + ")")
    return entry


def quantiles(metrics, base, fractions=(0.5, 0.99, 0.999)):
    ordered = sorted(buckets(metrics, base).items())
    count = ordered[-1][1] if ordered else 0
    result = {}
    for fraction in fractions:
        target = fraction * count
        previous_le, previous_count = 0.0, 0.0
        value = None
        for le, cumulative in ordered:
            if cumulative >= target:
                if le == float("inf"):
                    value = previous_le
                else:
                    span = cumulative - previous_count
                    value = previous_le + (le - previous_le) * ((target - previous_count) / span if span else 1)
                break
            previous_le, previous_count = le, cumulative
        result[f"p{str(fraction * 100).rstrip('0').rstrip('.')}_ms"] = round((value or 0) * 1000, 2)
    return result


def proc_stats(pid):
    with open(f"/proc/{pid}/stat") as handle:
        fields = handle.read().rsplit(")", 1)[1].split()
    cpu = (int(fields[11]) + int(fields[12])) / CLK_TCK
    peak = 0
    with open(f"/proc/{pid}/status") as handle:
        for line in handle:
            if line.startswith("VmHWM:"):
                peak = int(line.split()[1]) * 1024
    return cpu, peak


def with_jemalloc():
    """The environment for pushline-bench with jemalloc preloaded: the allocator the pushline
    executable links, so that the client alone is measured as the worker runs it."""
    env = dict(os.environ)
    library = "/usr/lib/x86_64-linux-gnu/libjemalloc.so.2"
    if os.path.exists(library):
        env["LD_PRELOAD"] = library
    return env


def allocations_per_notification(allocations):
    """jemalloc's allocation requests per notification in the steady part of a run (None when the
    worker does not report them, or too little was sent between two samples)."""
    if "first" not in allocations or "last" not in allocations:
        return None
    (sent_first, first), (sent_last, last) = allocations["first"], allocations["last"]
    if sent_last - sent_first < 1000:
        return None
    return round((last - first) / (sent_last - sent_first), 2)


def with_bytes_per_inflight(memory):
    """Adds the heap's growth from idle to its peak per notification in flight at that peak."""
    growth = memory["heap_allocated_mb"] - memory.get("heap_allocated_idle_mb", 0.0)
    if memory["inflight_at_heap_peak"]:
        memory["heap_bytes_per_inflight_notification"] = round(growth * 2**20 / memory["inflight_at_heap_peak"])
    return memory


def context_switches(pid):
    """Voluntary plus involuntary context switches of every thread of `pid` so far (threads that
    already ended are not counted: the worker's threads live as long as it does)."""
    total = 0
    for task in os.listdir(f"/proc/{pid}/task"):
        try:
            with open(f"/proc/{pid}/task/{task}/status") as handle:
                for line in handle:
                    if line.startswith(("voluntary_ctxt_switches:", "nonvoluntary_ctxt_switches:")):
                        total += int(line.split()[1])
        except FileNotFoundError:
            continue
    return total


def topic_records(bootstrap, topic):
    """How many records `topic` holds, read from the start until two idle polls (the embedded
    broker's end offsets are not a record count)."""
    from confluent_kafka import Consumer, TopicPartition
    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": f"bench-count-{time.time()}",
                         "enable.auto.commit": False, "log_level": 0})
    try:
        partitions = consumer.list_topics(topic, timeout=10).topics[topic].partitions
        consumer.assign([TopicPartition(topic, partition, 0) for partition in partitions])
        count, idle = 0, 0
        while idle < 2:
            messages = consumer.consume(10000, 1.0)
            if not messages:
                idle += 1
                continue
            idle = 0
            count += sum(1 for message in messages if not message.error())
        return count
    finally:
        consumer.close()


def results_modes(results, full, compact):
    """The two results modes at 100 tokens per job, from one run: records per job and worker CPU
    per notification, each also as a ratio to h2load's CPU per request against the same mock."""
    client = results.get("ceiling_mock", {}).get("client_cpu_us_per_request")
    entry = {}
    for mode, run in (("full", full), ("compact", compact)):
        entry[mode] = {"results_records_per_job": run["results_records_per_job"],
                       "cpu_us_per_notification": run["cpu_us_per_notification"],
                       "steady_cpu_us_per_notification": run["steady_cpu_us_per_notification"],
                       "notifications_per_second": run["notifications_per_second"]}
        if client:
            entry[mode]["cpu_ratio_to_h2load"] = round(run["cpu_us_per_notification"] / client, 3)
            entry[mode]["steady_cpu_ratio_to_h2load"] = round(run["steady_cpu_us_per_notification"] / client, 3)
    entry["compact_cpu_vs_full"] = round(compact["cpu_us_per_notification"] / full["cpu_us_per_notification"], 3)
    entry["compact_steady_cpu_vs_full"] = round(
        compact["steady_cpu_us_per_notification"] / max(full["steady_cpu_us_per_notification"], 1e-9), 3)
    log(f"  results modes at 100 tokens/job: records/job full {full['results_records_per_job']}, compact "
        f"{compact['results_records_per_job']}; CPU us/notification full {full['cpu_us_per_notification']}, compact "
        f"{compact['cpu_us_per_notification']} (compact/full {entry['compact_cpu_vs_full']}, steady "
        f"{entry['compact_steady_cpu_vs_full']})"
        + (f"; / h2load CPU per request ({client} us): full {entry['full']['cpu_ratio_to_h2load']}, compact "
           f"{entry['compact']['cpu_ratio_to_h2load']}" if client else ""))
    return entry


def jobs_file(path, tokens, per_job, prefix, deadline=None, personalised=False, apps=None):
    """Writes the jobs of a run; `personalised`: each token an object with its own `vars`, and
    the payload PERSONAL_PAYLOAD; `apps`: the jobs' apps, in turn (none: the default app)."""
    with open(path, "w") as handle:
        job, sent = 0, 0
        while sent < tokens:
            n = min(per_job, tokens - sent)
            hexes = ["%056x%08x" % (job, i) for i in range(n)]
            if personalised:
                entries = [{"token": token, "vars": {"name": f"User {job}-{i}", "count": (job + i) % 50}}
                           for i, token in enumerate(hexes)]
                record = {"id": f"{prefix}-{job}", "tokens": entries, "payload": json.loads(PERSONAL_PAYLOAD)}
            else:
                record = {"id": f"{prefix}-{job}", "tokens": hexes, "payload": json.loads(PAYLOAD)}
            if deadline:
                record["deadline"] = deadline
            if apps:
                record["app"] = apps[job % len(apps)]
            handle.write(json.dumps(record, separators=(",", ":")) + "\n")
            job += 1
            sent += n
    return job


class Stack(LocalStack):
    """The local stack (scripts/lib/stack.py) with the mock the benchmarks drive."""

    def __init__(self, mock_args):
        super().__init__(RUN, "BENCHKEY01", "BENCHTEAM1")
        self.start_broker()
        self.generate_key()
        self.start_mock(mock_args)
        self.mock_port = self.mock.port
        self.jwt = subprocess.run([BIN, "jwt", "--key-file", self.key, "--key-id", self.key_id, "--team-id", self.team_id],
                                  capture_output=True, text=True, check=True).stdout.strip()

    def mock_stats(self):
        return self.mock.write_stats()

    def mock_request(self):
        """What h2load sends the mock: the URL, the APNs headers with a valid bearer token, and
        the file holding the payload."""
        payload = os.path.join(RUN, "payload.json")
        with open(payload, "w") as handle:
            handle.write(PAYLOAD)
        headers = [f"authorization: bearer {self.jwt}", "apns-topic: com.example.app", "apns-push-type: alert"]
        return f"https://127.0.0.1:{self.mock_port}/3/device/{'ab' * 32}", headers, payload

    def topics(self, name, urgent=False):
        """Creates the topics of run `name` (an idle urgent lane too when `urgent`)."""
        topics = {"jobs_topic": f"bench.{name}.jobs", "results_topic": f"bench.{name}.results",
                  "dead_letter_topic": f"bench.{name}.dlq"}
        if urgent:
            topics["urgent_jobs_topic"] = f"bench.{name}.urgent"
        for key, partitions in (("jobs_topic", 4), ("results_topic", 4), ("dead_letter_topic", 1), ("urgent_jobs_topic", 2)):
            if key in topics:
                self.broker.create_topic(topics[key], partitions)
        return topics

    def preload(self, name, tokens, per_job, deadline=None, urgent=False, results="full", personalised=False, apps=1):
        """Creates run `name`'s topics and worker configuration and enqueues its jobs; returns
        (topics, config, metrics port, jobs). `apps`: how many apps the worker serves (the same
        key and bundle, as an operator with several apps under one team would configure them),
        the jobs spread over them in turn."""
        topics = self.topics(name, urgent)
        app_names = ["default"] + [f"app{i}" for i in range(2, apps + 1)] if apps > 1 else None
        auth = {"type": "token", "key_file": self.key, "key_id": self.key_id, "team_id": self.team_id}
        app_section = {app: {"bundle_id": BUNDLE_ID, "auth": auth} for app in app_names} if app_names else None
        # `full` is the default: left out, so a build from before worker.results runs too.
        config, port = self.config(name, f"bench-{name}", topics=topics, log_level="warning", apps=app_section,
                                   overrides={"worker": {"results": results}} if results != "full" else None)
        jobs_path = os.path.join(RUN, f"{name}.ndjson")
        jobs = jobs_file(jobs_path, tokens, per_job, name, deadline, personalised, app_names)
        subprocess.run([BIN, "enqueue", "--config", config, "--file", jobs_path, "--quiet"], check=True)
        return topics, config, port, jobs

    def worker_run(self, name, tokens, per_job, deadline=None, profile=False, urgent=False, results="full",
                   personalised=False, apps=1):
        """Preloads the jobs, starts a worker (`results`: its worker.results mode; `apps`: how many
        apps it serves), measures it until every job is complete."""
        topics, config, port, jobs = self.preload(name, tokens, per_job, deadline, urgent, results, personalised, apps)
        # perf wraps the worker (attaching with -p would miss the threads it starts later); the
        # CPU figures of a profiled run are then perf's process, worker included, not the worker alone.
        # PUSHLINE_PERF_CALL_GRAPH=dwarf attributes leaf functions (swift_retain, memmove) to their
        # callers, which frame pointers miss; its data is far larger, so lower the frequency with it.
        call_graph = os.environ.get("PUSHLINE_PERF_CALL_GRAPH", "fp")
        recorder = ["perf", "record", f"--call-graph={call_graph}", "-F", os.environ.get("PUSHLINE_PERF_FREQUENCY", "999"),
                    "-o", os.path.join(RUN, f"{name}.perf.data"), "--"] if profile else []
        # The mock and the broker share the machine with the worker: their CPU per notification
        # says what the end-to-end rate costs beyond the worker's own.
        broker_pid = self.broker.pid
        mock_cpu_before, _ = proc_stats(self.mock.pid)
        broker_cpu_before, _ = proc_stats(broker_pid)
        worker = self.start_worker(config, port, name=name, binary=WORKER_BIN, wrapper=recorder)
        timeline, first, last_metrics = [], None, None
        startup_cpu, switches_at_first, sent_at_first = 0.0, 0, 0
        # The worker's heap as jemalloc counts it (sampled every 250 ms), and what was in flight then.
        memory = {"heap_allocated_mb": 0.0, "heap_resident_mb": 0.0, "inflight_at_heap_peak": 0, "max_inflight": 0}
        allocations = {}
        begin = time.time()
        while time.time() - begin < 900:
            time.sleep(0.25)
            metrics = scrape(f"127.0.0.1:{port}")
            if metrics is None:
                continue
            now = time.time()
            sent = total(metrics, "pushline_notifications_total")
            done = total(metrics, "pushline_jobs_total")
            if first is None and sent > 0:
                first = now
                # Start-up (process start, group join, connections) ends with the first notification.
                # It is sampled: what was sent by then is left out of the steady figures too.
                startup_cpu, _ = proc_stats(worker.pid)
                switches_at_first = context_switches(worker.pid)
                sent_at_first = sent
            if first is not None:
                timeline.append((round(now - first, 2), sent))
                # jemalloc's allocation requests against notifications, between the first sample
                # that saw a notification and the last one (both from the same scrapes).
                requests = total(metrics, "pushline_heap_allocations")
                if requests:
                    if "first" not in allocations:
                        allocations["first"] = (sent, requests)
                    allocations["last"] = (sent, requests)
            last_metrics = metrics
            allocated = total(metrics, "pushline_heap_allocated_bytes") / 2**20
            inflight = int(total(metrics, "pushline_inflight_notifications"))
            memory["max_inflight"] = max(memory["max_inflight"], inflight)
            memory["heap_resident_mb"] = max(memory["heap_resident_mb"], round(total(metrics, "pushline_heap_resident_bytes") / 2**20, 1))
            if sent == 0 and allocated:
                memory["heap_allocated_idle_mb"] = round(allocated, 1)
            if allocated > memory["heap_allocated_mb"]:
                memory["heap_allocated_mb"], memory["inflight_at_heap_peak"] = round(allocated, 1), inflight
            if done >= jobs:
                break
        end = time.time()
        cpu, peak = proc_stats(worker.pid)
        switches = context_switches(worker.pid) - (switches_at_first if first is not None else 0)
        mock_cpu = proc_stats(self.mock.pid)[0] - mock_cpu_before
        broker_cpu = proc_stats(broker_pid)[0] - broker_cpu_before
        if profile:
            worker.send_signal(signal.SIGINT)
            worker.process.wait(timeout=60)
            log(f"  profile: perf report -i {os.path.join(RUN, f'{name}.perf.data')} --no-children")
        worker.stop(timeout=60)
        wall = end - (first or begin)
        published = topic_records(self.broker.bootstrap_servers, topics["results_topic"])
        result = {"results_mode": results, "results_records": published,
                  "results_records_per_job": round(published / jobs, 2),
                  "tokens": tokens, "tokens_per_job": per_job, "jobs": jobs, "seconds": round(wall, 2),
                  "notifications_per_second": round(tokens / wall), "worker_cpu_seconds": round(cpu, 2),
                  "cpu_us_per_notification": round(cpu / tokens * 1e6, 2),
                  # The steady figure: from the first notification to the last job, start-up left out.
                  "startup_cpu_seconds": round(startup_cpu, 2),
                  "steady_cpu_us_per_notification": round((cpu - startup_cpu) / max(1, tokens - sent_at_first) * 1e6, 2),
                  "context_switches_per_notification": round(switches / max(1, tokens - sent_at_first), 3),
                  "peak_rss_mb": round(peak / 2**20, 1), "memory": with_bytes_per_inflight(memory),
                  "allocations_per_notification": allocations_per_notification(allocations),
                  "mock_cpu_us_per_notification": round(mock_cpu / tokens * 1e6, 2),
                  "broker_cpu_us_per_notification": round(broker_cpu / tokens * 1e6, 2),
                  "end_to_end_latency": quantiles(last_metrics, "pushline_end_to_end_latency_seconds"),
                  "apns_latency": quantiles(last_metrics, "pushline_apns_latency_seconds"),
                  "timeline": timeline}
        return result


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--tokens", type=int, default=500_000)
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--only", default=",".join(PARTS),
                        help=f"comma-separated parts to run (default all: {','.join(PARTS)}); a partial run is "
                             "written to .run/bench/partial.json, not to bench/results")
    parser.add_argument("--results-modes", default="full,compact",
                        help="worker.results modes of the 100-tokens-per-job part (default both, in one run; "
                             "`full` alone for a PUSHLINE_WORKER_BIN from before the key)")
    parser.add_argument("--profile", action="store_true",
                        help="record the worker of each end-to-end part with perf (.run/bench/<part>.perf.data)")
    options = parser.parse_args()
    parts = [part for part in options.only.split(",") if part]
    unknown = [part for part in parts if part not in PARTS]
    if unknown:
        parser.error(f"unknown part(s): {', '.join(unknown)}")
    complete = set(parts) == set(PARTS)
    tokens = 50_000 if options.quick else options.tokens
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True, text=True).stdout.strip()
    results = {"date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"), "commit": commit,
               "machine": {"cores": os.cpu_count(), "kernel": os.uname().release}, "tokens": tokens}
    stack = Stack(["--max-streams", "1000"])
    try:
        url, headers, payload = stack.mock_request()

        if "ceiling" in parts:
            ceiling_parts(results, stack, url, headers, payload)
        ceiling = results.get("ceiling_mock", {}).get("requests_per_second")
        ceiling_4x1000 = results.get("ceiling_mock_4x1000", {}).get("requests_per_second")

        if "transport" in parts:
            transport_part(results, payload)

        if "decode" in parts:
            log("parts: job decoding")
            results["decode"] = [json.loads(line) for line in subprocess.run([BENCH, "decode", "--iterations", "200000"],
                                                                             capture_output=True, text=True, check=True).stdout.splitlines()]
            for entry in results["decode"]:
                log(f"  {entry['tokens_per_job']} token(s)/job: {entry['ns_per_job']:,} ns/job")

        if "apns" in parts:
            log("parts: the APNs client alone (no Kafka)")
            results["apns_client"] = json.loads(subprocess.run(
                [BENCH, "apns", "--endpoint", f"127.0.0.1:{stack.mock_port}", "--ca-file", f"{RUN}/tls/ca.pem",
                 "--key-file", stack.key, "--key-id", "BENCHKEY01", "--team-id", "BENCHTEAM1", "--count", str(max(tokens, 200_000))],
                capture_output=True, text=True, check=True, env=with_jemalloc()).stdout)
            log(f"  {results['apns_client']['notifications_per_second']:,} notifications/s, "
                f"{results['apns_client']['cpu_us_per_notification']} us CPU/notification (the bench process: pool and load loop)")

        if "kafka" in parts:
            log("parts: Kafka alone (consume, decode, produce: jobs past their deadline are not sent to APNs)")
            # Also at one token per job: each notification then also costs a consumed record, its
            # decode and intake, and a `job_done` record. Not a floor for the 1-token part: an
            # expired job keeps a progress of its own, where sent single-token jobs share their
            # poll's group (docs/architecture.md), so this costs more per job than sending's Kafka
            # side does.
            for key, name, per_job in (("kafka_only", "kafka", 100), ("kafka_only_1_per_job", "kafka1", 1)):
                run = results[key] = beside(results, stack, (url, headers, payload), lambda: stack.worker_run(
                    name, tokens, per_job, deadline="2000-01-01T00:00:00Z", profile=options.profile))
                log(f"  {per_job} token(s)/job: {run['notifications_per_second']:,} notifications/s, "
                    f"{run['cpu_us_per_notification']} us CPU/notification (steady {run['steady_cpu_us_per_notification']})")
                log_beside(run)

        for per_job in (100, 1):
            name = f"e2e{per_job}"
            if name not in parts:
                continue
            log(f"end to end: {tokens:,} tokens in jobs of {per_job}")
            run = beside(results, stack, (url, headers, payload),
                         lambda: stack.worker_run(name, tokens, per_job, profile=options.profile))
            if ceiling:
                run["ratio_to_ceiling"] = round(run["notifications_per_second"] / ceiling, 3)
            if ceiling_4x1000:
                run["ratio_to_ceiling_4x1000"] = round(run["notifications_per_second"] / ceiling_4x1000, 3)
            results[f"end_to_end_{per_job}_per_job"] = run
            if ceiling:
                results.setdefault("worker_cpu_budget", {})[f"{per_job}_per_job"] = budget(results, run, per_job, ceiling)
            log_run(run)
            log_beside(run)
            if per_job == 100 and "compact" in options.results_modes.split(","):
                # The same part in compact results mode (worker.results: compact), in the same run.
                log(f"end to end: {tokens:,} tokens in jobs of 100, worker.results: compact")
                compact = stack.worker_run("e2e100c", tokens, 100, profile=options.profile, results="compact")
                if ceiling:
                    compact["ratio_to_ceiling"] = round(compact["notifications_per_second"] / ceiling, 3)
                results["end_to_end_100_per_job_compact"] = compact
                log_run(compact)
                results["results_modes_100_per_job"] = results_modes(results, run, compact)
        if "lanes" in parts:
            lanes_part(results, stack, tokens)
        if "latency" in parts:
            latency_part(results, stack, tokens)
        if "apps" in parts:
            apps_part(results, stack, (url, headers, payload), tokens, profile=options.profile,
                      rounds=2 if options.quick else 3)
        if "personalise" in parts:
            personalise_part(results, stack, (url, headers, payload), tokens, profile=options.profile,
                             rounds=1 if options.quick else 2)
        if "e2e100" in parts or "e2e1" in parts:
            stats = stack.mock_stats()
            results["stream_discipline"] = {"max_open_streams": stats["max_open_streams"],
                                            "max_advertised_limit": stats["max_advertised_limit"],
                                            "limit_violations": stats["limit_violations"]}
            log(f"stream discipline: max open {stats['max_open_streams']} of limit {stats['max_advertised_limit']}, "
                f"violations {stats['limit_violations']}")
    finally:
        stack.close()

    if not complete:
        path = os.path.join(RUN, "partial.json")
        with open(path, "w") as handle:
            json.dump(results, handle, indent=2)
        log(f"partial results: {path}")
        return
    os.makedirs(os.path.join(ROOT, "bench/results"), exist_ok=True)
    stem = os.path.join(ROOT, "bench/results", f"{datetime.date.today().isoformat()}-{commit}")
    # A later run of the same commit on the same day is `-2`, `-3`, ...: never written over.
    number = 1
    while os.path.exists(stem + (f"-{number}" if number > 1 else "") + ".json"):
        number += 1
    stem += f"-{number}" if number > 1 else ""
    with open(stem + ".json", "w") as handle:
        json.dump(results, handle, indent=2)
    log(f"results: {stem}.json")
    plot(results, stem + ".png")


def beside(results, stack, request, part):
    """Runs `part` (a worker run) between two h2load runs against the same mock (4 x 250, as the
    ceiling), and adds the worker's steady CPU per notification as a ratio to h2load's CPU per
    request twice: to the ceiling's (measured minutes earlier, at the start of the run) and to
    the mean of the two beside it (seconds before and after). The host's speed drifts within a
    run too (h2load's CPU per request moved 2.94-3.66 us within one ceiling part); the ratio
    to what h2load cost beside the part is the one that drift does not move."""
    url, headers, payload = request
    before = mock_h2load(url, headers, payload)
    run = part()
    after = mock_h2load(url, headers, payload)
    client = (before["client_cpu_us_per_request"] + after["client_cpu_us_per_request"]) / 2
    run["h2load_beside"] = {"client_cpu_us_per_request": round(client, 2),
                            "before": before["client_cpu_us_per_request"], "after": after["client_cpu_us_per_request"],
                            "requests_per_second": [before["requests_per_second"], after["requests_per_second"]]}
    steady = run["steady_cpu_us_per_notification"]
    run["steady_cpu_ratio_to_h2load_beside"] = round(steady / client, 3)
    ceiling = results.get("ceiling_mock", {}).get("client_cpu_us_per_request")
    if ceiling:
        run["steady_cpu_ratio_to_h2load"] = round(steady / ceiling, 3)
    return run


def log_beside(run):
    entry = run["h2load_beside"]
    log(f"  steady worker CPU / h2load CPU per request: {run.get('steady_cpu_ratio_to_h2load', '-')} (the ceiling's), "
        f"{run['steady_cpu_ratio_to_h2load_beside']} (h2load beside the part: {entry['before']} us before, "
        f"{entry['after']} us after)")


def log_run(run):
    log(f"  {run['notifications_per_second']:,} notifications/s ({run.get('ratio_to_ceiling', '-')} of the 4x250 ceiling, "
        f"{run.get('ratio_to_ceiling_4x1000', '-')} of 4x1000), "
        f"{run['cpu_us_per_notification']} us CPU/notification, steady {run['steady_cpu_us_per_notification']} "
        f"(start-up {run['startup_cpu_seconds']} s; mock {run['mock_cpu_us_per_notification']}, "
        f"broker {run['broker_cpu_us_per_notification']}), {run['context_switches_per_notification']} "
        f"context switches/notification, {run['allocations_per_notification']} allocations/notification, "
        f"peak RSS {run['peak_rss_mb']} MB (heap {run['memory']}), end-to-end p50/p99/p999 {run['end_to_end_latency']}, {run['results_records_per_job']} results-topic "
        f"records/job ({run['results_mode']})")


def lanes_part(results, stack, tokens, rounds=3):
    """The campaign's cost of an idle urgent lane: e2e at 100 tokens/job without and with
    `kafka.urgent_jobs_topic` configured, alternating, `rounds` times; medians of the ratios."""
    log(f"lanes: {tokens:,} tokens in jobs of 100, without and with an idle urgent lane, {rounds} rounds")
    rates, cpus, samples = [], [], []
    for round_ in range(rounds):
        without = stack.worker_run(f"lanes{round_}", tokens, 100)
        with_lane = stack.worker_run(f"lanes{round_}u", tokens, 100, urgent=True)
        rates.append(with_lane["notifications_per_second"] / without["notifications_per_second"])
        cpus.append(with_lane["cpu_us_per_notification"] / without["cpu_us_per_notification"])
        samples.append({"without": {k: without[k] for k in ("notifications_per_second", "cpu_us_per_notification")},
                        "with_idle_urgent_lane": {k: with_lane[k] for k in ("notifications_per_second", "cpu_us_per_notification")}})
        log(f"  round {round_ + 1}: {without['notifications_per_second']:,} vs {with_lane['notifications_per_second']:,} "
            f"notifications/s, {without['cpu_us_per_notification']} vs {with_lane['cpu_us_per_notification']} us CPU")
    median = lambda values: round(sorted(values)[len(values) // 2], 3)
    results["lanes_idle"] = {"rate_ratio": median(rates), "cpu_ratio": median(cpus), "rounds": samples}
    log(f"  with an idle urgent lane / without: rate {median(rates)}, CPU per notification {median(cpus)} (medians)")


def personalise_part(results, stack, request, tokens, profile=False, rounds=2):
    """Personalised jobs of 100 tokens (each token its own `vars`, the payload PERSONAL_PAYLOAD)
    beside plain jobs of 100 tokens and single-token jobs (today's way to personalise), in one
    run, each part between two h2load runs (`beside`): the worker's steady CPU per notification
    as a ratio to h2load's beside it, and personalised / plain (target <= 1.15) and personalised /
    single-token (target: clearly below 1). `rounds` rounds, alternating; medians of the ratios."""
    log(f"personalise: {tokens:,} tokens in personalised jobs of 100, plain jobs of 100 and jobs of 1, {rounds} rounds")
    shapes = (("plain100", 100, False), ("personal100", 100, True), ("plain1", 1, False))
    samples = {name: [] for name, _, _ in shapes}
    for round_ in range(rounds):
        for name, per_job, personalised in shapes:
            run = beside(results, stack, request, lambda: stack.worker_run(
                f"{name}r{round_}", tokens, per_job, profile=profile, personalised=personalised))
            samples[name].append(run)
            log(f"  round {round_ + 1}, {name}: {run['notifications_per_second']:,} notifications/s, steady "
                f"{run['steady_cpu_us_per_notification']} us CPU/notification, "
                f"{run['steady_cpu_ratio_to_h2load_beside']} x h2load beside, {run['results_records_per_job']} records/job")
    median = lambda values: round(sorted(values)[len(values) // 2], 3)

    def ratio(a, b, key):
        return [x[key] / y[key] for x, y in zip(samples[a], samples[b])]

    entry = {name: {"steady_cpu_us_per_notification": [run["steady_cpu_us_per_notification"] for run in runs],
                    "steady_cpu_ratio_to_h2load_beside": [run["steady_cpu_ratio_to_h2load_beside"] for run in runs],
                    "notifications_per_second": [run["notifications_per_second"] for run in runs],
                    "results_records_per_job": runs[0]["results_records_per_job"]}
             for name, runs in samples.items()}
    key = "steady_cpu_ratio_to_h2load_beside"
    entry["personal_vs_plain100"] = median(ratio("personal100", "plain100", key))
    entry["personal_vs_plain1"] = median(ratio("personal100", "plain1", key))
    entry["plain1_vs_plain100"] = median(ratio("plain1", "plain100", key))
    entry["personal_vs_plain100_raw_cpu"] = median(ratio("personal100", "plain100", "steady_cpu_us_per_notification"))
    entry["target_personal_vs_plain100"] = 1.15
    results["personalise"] = entry
    log(f"  worker CPU per notification (each / h2load beside it), medians of {rounds} rounds: personalised 100 / plain 100 "
        f"= {entry['personal_vs_plain100']} (target <= 1.15; raw CPU {entry['personal_vs_plain100_raw_cpu']}), "
        f"personalised 100 / plain 1 = {entry['personal_vs_plain1']}, plain 1 / plain 100 = {entry['plain1_vs_plain100']}")


def apps_part(results, stack, request, tokens, profile=False, rounds=3, apps=4):
    """Several apps at the cost of one (issue 62): single-token jobs and jobs of 100 tokens, each
    with one app and with `apps` apps (the jobs spread over them in turn, the same key), alternating,
    `rounds` rounds, each run between two h2load runs (`beside`). Reports the worker's steady CPU
    per notification over h2load's beside it, its spread, the ratio several apps / one app per
    round and its median (targets: at most 1.1 at one token per job, 1.05 at 100), and peak RSS."""
    log(f"apps: {tokens:,} tokens in jobs of 1 and of 100, one app against {apps} apps, {rounds} rounds")
    median = lambda values: round(sorted(values)[len(values) // 2], 3)
    entry = {"apps": apps, "rounds": rounds}
    for per_job in (1, 100):
        one, several = [], []
        for round_ in range(rounds):
            for samples, count in ((one, 1), (several, apps)):
                run = beside(results, stack, request, lambda: stack.worker_run(
                    f"apps{count}x{per_job}r{round_}", tokens, per_job, profile=profile, apps=count))
                samples.append(run)
                log(f"  round {round_ + 1}, {per_job} token(s)/job, {count} app(s): {run['notifications_per_second']:,} "
                    f"notifications/s, steady {run['steady_cpu_us_per_notification']} us CPU/notification, "
                    f"{run['steady_cpu_ratio_to_h2load_beside']} x h2load beside, peak RSS {run['peak_rss_mb']} MB")
        key = "steady_cpu_ratio_to_h2load_beside"
        ratios = [round(b[key] / a[key], 3) for a, b in zip(one, several)]
        part = {
            "one_app": {key: [run[key] for run in one], "peak_rss_mb": [run["peak_rss_mb"] for run in one],
                        "notifications_per_second": [run["notifications_per_second"] for run in one]},
            f"{apps}_apps": {key: [run[key] for run in several], "peak_rss_mb": [run["peak_rss_mb"] for run in several],
                             "notifications_per_second": [run["notifications_per_second"] for run in several]},
            "several_vs_one_per_round": ratios,
            "several_vs_one": median(ratios),
            "target": 1.1 if per_job == 1 else 1.05,
        }
        entry[f"{per_job}_per_job"] = part
        log(f"  {per_job} token(s)/job: {apps} apps / 1 app = {part['several_vs_one']} (median of {ratios}; target <= "
            f"{part['target']}); x h2load one app {part['one_app'][key]}, {apps} apps {part[f'{apps}_apps'][key]}; peak RSS "
            f"one app {part['one_app']['peak_rss_mb']} MB, {apps} apps {part[f'{apps}_apps']['peak_rss_mb']} MB")
    results["apps"] = entry


def latency_part(results, stack, tokens, moderate_rate=500, moderate_seconds=10, urgent_rate=20, urgent_jobs=100):
    """Produce-to-result latency of single-token jobs: at a moderate rate on an idle worker, then
    urgent ones behind a campaign that saturates the worker (its jobs preloaded in jobs of 100)."""
    name = "latency"
    topics = stack.topics(name, urgent=True)
    config, port = stack.config(name, f"bench-{name}", topics=topics, log_level="warning")
    worker = stack.start_worker(config, port, name=name, binary=WORKER_BIN)
    probe = LatencyProbe(stack.broker.bootstrap_servers, topics["results_topic"], f"bench-{name}-probe")
    try:
        probe.warm_up(topics["jobs_topic"])
        probe.warm_up(topics["urgent_jobs_topic"])
        log(f"latency: single-token jobs at {moderate_rate}/s for {moderate_seconds} s, produce to delivery record")
        moderate = probe.latencies(probe.run(topics["jobs_topic"], "moderate", moderate_rate * moderate_seconds, moderate_rate))
        log(f"  p50 {moderate.get('p50_ms')} ms, p99 {moderate.get('p99_ms')} ms, max {moderate.get('max_ms')} ms")

        campaign = max(tokens, 1_000_000)
        jobs_path = os.path.join(RUN, f"{name}.ndjson")
        campaign_jobs = jobs_file(jobs_path, campaign, 100, "campaign")
        subprocess.run([BIN, "enqueue", "--config", config, "--file", jobs_path, "--quiet"], check=True)
        done_before = total(scrape(f"127.0.0.1:{port}") or {}, "pushline_jobs_total")
        log(f"latency: {urgent_jobs} urgent single-token jobs at {urgent_rate}/s behind a {campaign:,}-token campaign")
        sent = probe.run(topics["urgent_jobs_topic"], "urgent", urgent_jobs, urgent_rate)
        metrics = scrape(f"127.0.0.1:{port}") or {}
        campaign_left = campaign_jobs - (total(metrics, "pushline_jobs_total") - done_before)
        urgent = probe.latencies(sent)
        urgent["campaign_jobs_left_when_the_last_was_sent"] = campaign_left
        log(f"  p50 {urgent.get('p50_ms')} ms, p99 {urgent.get('p99_ms')} ms, max {urgent.get('max_ms')} ms "
            f"({campaign_left:,} of {campaign_jobs:,} campaign jobs still to do when the last urgent job was sent)")
        results["latency"] = {"moderate": {"rate": moderate_rate, **moderate},
                              "urgent_behind_campaign": {"rate": urgent_rate, "campaign_tokens": campaign, **urgent}}
    finally:
        probe.close()
        worker.stop(timeout=60)


def ceiling_parts(results, stack, url, headers, payload, rounds=3):
    """h2load against the mock and against nghttpd, back to back, `rounds` times: the machine's
    speed drifts by 10-20% within a minute on a shared host, so the figures are the medians of
    the rounds (every sample is kept in the JSON)."""
    docs = os.path.join(RUN, "nghttpd")
    os.makedirs(docs, exist_ok=True)
    with open(os.path.join(docs, "index.html"), "w") as handle:
        handle.write("ok")
    # nghttpd takes a port number only: a reserved one (it binds with SO_REUSEADDR).
    reservation = PortReservation()
    nghttpd_port = reservation.port
    nghttpd = start_process(["nghttpd", "-d", docs, "-n", str(os.cpu_count()), str(nghttpd_port),
                             f"{RUN}/tls/server.key", f"{RUN}/tls/server.pem"])
    wait_port(nghttpd_port, process=nghttpd)
    reservation.release()
    # 4 x 250 is the ceiling every ratio uses (the shape, and the faster one on 2 cores);
    # 4 x 1000 is the worker's own shape, reported beside it.
    shapes = {"": 250, "_4x1000": 1000}
    samples = {suffix: ([], []) for suffix in shapes}
    for round_ in range(rounds):
        for suffix, streams in shapes.items():
            log(f"ceiling, round {round_ + 1}/{rounds}: h2load against the mock (4 connections x {streams} streams), "
                "then against nghttpd")
            mock_samples, nghttpd_samples = samples[suffix]
            mock_cpu_before = proc_stats(stack.mock.pid)[0]
            mock_samples.append(mock_h2load(url, headers, payload, streams))
            mock_samples[-1]["mock_cpu_us_per_request"] = round(
                (proc_stats(stack.mock.pid)[0] - mock_cpu_before) * 1e6 / max(mock_samples[-1]["succeeded"], 1), 2)
            # The same request, headers included (nghttpd decodes and ignores the APNs ones).
            nghttpd_samples.append(h2load(f"https://127.0.0.1:{nghttpd_port}/index.html", 400_000, 4, streams, headers, payload))
            log(f"  mock {mock_samples[-1]['requests_per_second']:,} req/s (h2load "
                f"{mock_samples[-1]['client_cpu_us_per_request']} us CPU/request, mock "
                f"{mock_samples[-1]['mock_cpu_us_per_request']}), nghttpd {nghttpd_samples[-1]['requests_per_second']:,} req/s")
    stop_process(nghttpd)

    def median_sample(samples):
        return sorted(samples, key=lambda sample: sample["requests_per_second"])[len(samples) // 2]

    for suffix, streams in shapes.items():
        mock_samples, nghttpd_samples = samples[suffix]
        results["ceiling_mock" + suffix] = {**median_sample(mock_samples),
                                            "samples": [m["requests_per_second"] for m in mock_samples]}
        results["ceiling_nghttpd" + suffix] = {**median_sample(nghttpd_samples),
                                               "samples": [n["requests_per_second"] for n in nghttpd_samples]}
        ratios = [round(m["requests_per_second"] / n["requests_per_second"], 3) for m, n in zip(mock_samples, nghttpd_samples)]
        results["mock_vs_nghttpd" + suffix] = sorted(ratios)[len(ratios) // 2]
        results["mock_vs_nghttpd_samples" + suffix] = ratios
        log(f"  4 x {streams}, median: mock {results['ceiling_mock' + suffix]['requests_per_second']:,} req/s, nghttpd "
            f"{results['ceiling_nghttpd' + suffix]['requests_per_second']:,} req/s; mock/nghttpd = "
            f"{results['mock_vs_nghttpd' + suffix]} (rounds: {ratios})")


def transport_part(results, payload):
    log("transport: our HTTP/2 client vs h2load against our HTTP/2 server over TLS")
    transport = {}
    for connections in (1, 4):
        ours = json.loads(subprocess.run([BENCH, "transport", "--connections", str(connections), "--streams", "100",
                                          "--seconds", "5"], capture_output=True, text=True, check=True).stdout)
        server = subprocess.Popen([BENCH, "serve", "--seconds", "60"], stdout=subprocess.PIPE, text=True)
        port = int(server.stdout.readline().split()[1])
        reference = h2load(f"https://127.0.0.1:{port}/3/device/0123", 300_000, connections, 100, [], payload)
        server.terminate()
        server.wait()
        transport[f"{connections}_connections"] = {
            "pushline_client_rps": ours["requests_per_second"], "h2load_rps": reference["requests_per_second"],
            "ratio": round(ours["requests_per_second"] / reference["requests_per_second"], 3)}
        log(f"  {connections} connection(s): ours {ours['requests_per_second']:,} req/s, h2load {reference['requests_per_second']:,}")
    results["transport"] = transport


def plot(results, path):
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        log("matplotlib missing: no plot")
        return
    figure, (left, right) = plt.subplots(1, 2, figsize=(13, 4.8))
    for key, label in (("end_to_end_100_per_job", "100 tokens/job"), ("end_to_end_1_per_job", "1 token/job"),
                       ("kafka_only", "Kafka only"), ("kafka_only_1_per_job", "Kafka only, 1 token/job")):
        timeline = results.get(key, {}).get("timeline", [])
        rates = [(t1, (s1 - s0) / (t1 - t0)) for (t0, s0), (t1, s1) in zip(timeline, timeline[1:]) if t1 > t0]
        if rates:
            left.plot([t for t, _ in rates], [r for _, r in rates], label=label)
    left.axhline(results["ceiling_mock"]["requests_per_second"], color="grey", linestyle="--", label="h2load ceiling (4 x 250)")
    left.axhline(results["ceiling_mock_4x1000"]["requests_per_second"], color="grey", linestyle=":",
                 label="h2load ceiling (4 x 1000)")
    left.set_xlabel("seconds since the first notification")
    left.set_ylabel("notifications / s")
    left.set_title("Throughput over time")
    left.legend()
    ceiling = results["ceiling_mock"]["requests_per_second"]
    parts = {
        "mock / nghttpd (4 x 250)": results["mock_vs_nghttpd"],
        "mock / nghttpd (4 x 1000)": results["mock_vs_nghttpd_4x1000"],
        "transport 1c / h2load": results["transport"]["1_connections"]["ratio"],
        "transport 4c / h2load": results["transport"]["4_connections"]["ratio"],
        "APNs client / ceiling": results["apns_client"]["notifications_per_second"] / ceiling,
        "Kafka only / ceiling": results["kafka_only"]["notifications_per_second"] / ceiling,
        "Kafka only 1/job / ceiling": results["kafka_only_1_per_job"]["notifications_per_second"] / ceiling,
        "e2e 100/job / ceiling": results["end_to_end_100_per_job"]["ratio_to_ceiling"],
        "e2e 1/job / ceiling": results["end_to_end_1_per_job"]["ratio_to_ceiling"],
        "e2e 100/job / 4 x 1000": results["end_to_end_100_per_job"]["ratio_to_ceiling_4x1000"],
        "e2e 1/job / 4 x 1000": results["end_to_end_1_per_job"]["ratio_to_ceiling_4x1000"],
    }
    right.barh(list(parts.keys()), list(parts.values()), color="#4c72b0")
    right.axvline(1.0, color="grey", linestyle="--")
    right.set_title("Ratios measured in this run")
    figure.tight_layout()
    figure.savefig(path, dpi=110)
    log(f"plot: {path}")


if __name__ == "__main__":
    try:
        main()
    except KeyboardInterrupt:
        sys.exit(130)
