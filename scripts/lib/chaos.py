"""Chaos scenarios for Pushline (scripts/chaos/all): each runs a campaign through the real pieces
(embedded broker, mock APNs, the release worker binary), injects faults, and checks that every
token ends with a final result. Prints one row per scenario and exits non-zero if any failed.
Each row also bounds its duplicate final records (docs/reliability.md, "Duplicates: bounds and
figures"): 0 where every handover is graceful, what the worker reported it could redo just before a
SIGKILL, what it had unanswered just before a Kafka outage; where another member takes the work
over during a fault, duplicates are reported and allowed.

usage: chaos.py [--only NAME[,NAME]] [--tokens N] [--soak-minutes M] [--broker tansu|librdkafka-mock]
                [--group-protocol classic|consumer] [--run-dir DIR]

--broker librdkafka-mock runs the rows on librdkafka's mock cluster instead of Tansu (stack.py);
--group-protocol consumer gives the workers `group.protocol: consumer` (KIP-848), which only the
mock broker implements.
"""
import argparse
import asyncio
import json
import os
import re
import signal
import subprocess
import sys
import threading
import time
import urllib.error

from prometheus import OPENER, buckets, scrape, total
import stack
from stack import CLIENT_PROPERTIES, LocalStack, Mock, exit_on_sigterm, stop_all

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
BIN = stack.BIN
# PUSHLINE_CHAOS_KAFKA: extra `kafka.properties` for every worker, as k=v;k=v (debug=cgrp,consumer, say).
# PUSHLINE_CHAOS_LOG_LEVEL: the workers' log level (debug, to see librdkafka's debug lines).
EXTRA_KAFKA = dict(item.split("=", 1) for item in os.environ.get("PUSHLINE_CHAOS_KAFKA", "").split(";") if "=" in item)
# PUSHLINE_CHAOS_REPORT_ONLY=1: a row whose duplicates exceed its bound says so in its note instead
# of failing (missing tokens and uncommitted offsets still fail it): to measure a worker that does
# not meet the bounds yet.
REPORT_ONLY = os.environ.get("PUSHLINE_CHAOS_REPORT_ONLY") == "1"
# --group-protocol: the workers' group protocol (stack.client_properties).
GROUP_PROTOCOL = "classic"
# A row's bound when another member takes the work over during the fault: duplicates are reported,
# not bounded (the row still needs every token's final record and every offset committed).
ALLOWED = None
BENCH = os.path.join(ROOT, "bench/.build/release/pushline-bench")
RUN = os.path.join(ROOT, ".run/chaos")


def log(message):
    print(f"chaos: {message}", flush=True)


class Proxy:
    """A TCP proxy in front of the broker that can cut the network (close every connection and
    reset new ones) and restore it: a broker outage as the workers see it. It listens on a port
    it binds itself, for the whole run (the broker advertises it), and forwards to `target_port`."""

    def __init__(self):
        self.target_port = None
        self.cut_off = False
        self.loop = asyncio.new_event_loop()
        self.server = None
        self.writers = set()
        self.clients = set()
        self.muted = set()
        threading.Thread(target=self.loop.run_forever, daemon=True).start()
        self.call(self._open())
        self.listen_port = self.server.sockets[0].getsockname()[1]

    def call(self, coroutine):
        return asyncio.run_coroutine_threadsafe(coroutine, self.loop).result(10)

    async def _open(self):
        self.server = await asyncio.start_server(self._client, "127.0.0.1", 0)

    async def _pipe(self, reader, writer, muted=None):
        """Relays reader to writer; while `muted` (the client's writer) is in `self.muted`, what
        the broker sends is dropped: an answer lost with the connection still up."""
        try:
            while data := await reader.read(65536):
                if muted is not None and muted in self.muted:
                    continue
                writer.write(data)
                await writer.drain()
        except Exception:
            pass
        finally:
            writer.close()

    async def _client(self, reader, writer):
        if self.cut_off:
            writer.transport.abort()
            return
        try:
            up_reader, up_writer = await asyncio.open_connection("127.0.0.1", self.target_port)
        except OSError:
            writer.close()
            return
        self.writers.update((writer, up_writer))
        self.clients.add(writer)
        await asyncio.gather(self._pipe(reader, up_writer), self._pipe(up_reader, writer, muted=writer))
        self.writers.discard(writer)
        self.writers.discard(up_writer)
        self.clients.discard(writer)
        self.muted.discard(writer)

    def mute(self, seconds):
        """Drops what the broker sends on the connections open now, for `seconds`; connections
        opened meanwhile are not affected. Returns how many connections."""
        async def start():
            muted = set(self.clients)
            self.muted |= muted
            self.loop.call_later(seconds, lambda: self.muted.difference_update(muted))
            return len(muted)

        return self.call(start())

    async def _cut(self):
        self.cut_off = True
        for writer in list(self.writers):
            writer.transport.abort()
        self.writers.clear()

    def cut(self):
        self.call(self._cut())

    def restore(self):
        self.cut_off = False


class ReadyzPoller:
    """Polls a worker's /readyz every `interval` seconds in a thread, keeping each answer as
    (unix time, status or None when nothing answered, body)."""

    def __init__(self, port, interval=0.5):
        self.url = f"http://127.0.0.1:{port}/readyz"
        self.interval = interval
        self.samples = []
        self.stopping = threading.Event()
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.thread.start()

    def _run(self):
        while not self.stopping.is_set():
            at = time.time()
            try:
                with OPENER.open(self.url, timeout=2) as response:
                    status, body = response.status, response.read().decode(errors="replace")
            except urllib.error.HTTPError as error:
                status, body = error.code, error.read().decode(errors="replace")
            except Exception as error:
                status, body = None, str(error)
            self.samples.append((at, status, body.strip()))
            self.stopping.wait(max(0.0, self.interval - (time.time() - at)))

    def stop(self):
        self.stopping.set()
        self.thread.join(10)
        return self.samples


class Stack(LocalStack):
    """The local stack (scripts/lib/stack.py) for one scenario: the broker (behind the proxy when
    asked), the chaos topics, a signing key, the mock APNs on a port reserved for the whole
    scenario (so it can start late or restart), configurations and workers."""

    def __init__(self, name, mock_flags, tokens, per_job=10, mock_running=True, partitions=4, proxy=False, worker=None,
                 campaign=None, kafka=None):
        self.name = name
        # `kafka`: settings of the workers' `kafka` section beyond the stack's (guard_join_rounds...).
        self.kafka_settings = dict(kafka or {})
        # `campaign`: the jobs' `campaign` field (what `pushline cancel --campaign` names).
        self.campaign_name = campaign
        # `worker`: settings of the workers' `worker` section beyond the chaos defaults.
        self.worker_settings = dict(worker or {})
        self._statuses, self._ends, self._results_reader = {}, {}, None
        directory = os.path.join(RUN, name)
        subprocess.run(["rm", "-rf", directory])
        super().__init__(directory, "CHAOSKEY01", "CHAOSTEAM1")
        self.proxy = Proxy() if proxy else None
        self.start_broker(advertised_port=self.proxy.listen_port if proxy else None,
                          topics=(("chaos.jobs", partitions), ("chaos.results", 4), ("chaos.dlq", 1)))
        if self.proxy:
            self.proxy.target_port = self.broker.port
        self.client_port = self.proxy.listen_port if proxy else self.broker.port
        self.generate_key()
        # Generate the mock's certificate once, so a mock started later is trusted with the same CA.
        Mock(self.dir, [], self_signed=True, log_level="error", log_path=os.path.join(self.dir, "tls.log")).stop()
        self.mock_port = self.reserve_port()
        self.mock_flags = mock_flags
        if mock_running:
            self.start_mock()
        self.jobs, self.tokens = self.campaign(tokens, per_job)

    def start_mock(self):
        return super().start_mock(self.mock_flags, port=self.mock_port, self_signed=False)

    def close(self):
        if self._results_reader is not None:
            self._results_reader.close()
            self._results_reader = None
        super().close()

    def config(self, shutdown_ms=10000):
        """A worker configuration on a reserved metrics port: (path, port)."""
        metrics_port = self.reserve_port()
        return super().config(
            f"worker-{metrics_port}", f"chaos-{self.name}", metrics_port=metrics_port,
            mock_endpoint=f"127.0.0.1:{self.mock_port}", ca_file=os.path.join(self.dir, "tls", "ca.pem"),
            brokers=f"127.0.0.1:{self.client_port}",
            topics={"jobs_topic": "chaos.jobs", "results_topic": "chaos.results", "dead_letter_topic": "chaos.dlq"},
            log_level=os.environ.get("PUSHLINE_CHAOS_LOG_LEVEL", "info"),
            properties=stack.client_properties(GROUP_PROTOCOL),
            overrides={"apns": {"request_timeout_ms": 3000},
                       "worker": {"shutdown_timeout_ms": shutdown_ms, **self.worker_settings},
                       "kafka": {"properties": dict(EXTRA_KAFKA), **self.kafka_settings}})

    def campaign(self, tokens, per_job):
        if tokens == 0:
            return 0, set()
        path = os.path.join(self.dir, "campaign.ndjson")
        all_tokens = []
        jobs = 0
        with open(path, "w") as handle:
            while len(all_tokens) < tokens:
                batch = ["%056x%08x" % (jobs, i) for i in range(min(per_job, tokens - len(all_tokens)))]
                all_tokens += batch
                job = {"id": f"{self.name}-{jobs}", "tokens": batch, "payload": {"aps": {"alert": "chaos"}}}
                if self.campaign_name:
                    job["campaign"] = self.campaign_name
                handle.write(json.dumps(job, separators=(",", ":")) + "\n")
                jobs += 1
        subprocess.run([BIN, "enqueue", "--config", self.config()[0], "--file", path, "--quiet"], check=True)
        return jobs, set(all_tokens)

    def start_worker(self):
        return super().start_worker(*self.config(), binary=BIN)

    def _read(self, record):
        if record.get("type") == "delivery" and record.get("final"):
            self._statuses.setdefault(record["token"], []).append(record.get("status"))
        source = record.get("source") or {}
        if source.get("topic") == "chaos.jobs":
            self._ends[source["partition"]] = max(self._ends.get(source["partition"], 0), source["offset"] + 1)

    def _reader(self):
        """The results topic's reader, opened once per scenario and read incrementally."""
        from results_topic import ResultsReader
        if self._results_reader is None:
            self._results_reader = ResultsReader(f"127.0.0.1:{self.client_port}", "chaos.results")
        return self._results_reader

    def final_statuses(self, settle=True):
        """token -> the statuses of its final delivery records (one, when all is well). With
        `settle`, reads until the topic has been quiet for two seconds (for a verdict); without,
        takes what has arrived by now (for a loop that waits)."""
        if settle:
            self._reader().catch_up(2, self._read)
        else:
            self._reader().poll(1.0, self._read)
        return self._statuses

    def uncommitted(self, timeout=60):
        """Partitions of chaos.jobs whose committed offset (asked without joining the group) is not
        one past the last job's offset, as {partition: (committed, end)}; the end offsets come from
        the results' `source` (the embedded broker's ListOffsets answers cannot be trusted). Waits
        up to `timeout` for the workers' last commits; {} when everything is committed."""
        from confluent_kafka import Consumer, TopicPartition
        self.final_statuses()
        ends = self._ends
        consumer = Consumer({"bootstrap.servers": f"127.0.0.1:{self.client_port}", "group.id": f"chaos-{self.name}",
                             "enable.auto.commit": False, "log_level": 0})
        try:
            deadline = time.time() + timeout
            while True:
                committed = {tp.partition: tp.offset for tp in
                             consumer.committed([TopicPartition("chaos.jobs", p) for p in ends], timeout=10)}
                behind = {p: (committed.get(p), end) for p, end in ends.items() if committed.get(p) != end}
                if not behind or time.time() > deadline:
                    return behind
                time.sleep(1)
        finally:
            consumer.close()

    def results(self, settle=True):
        """Every delivery record on the results topic: (token -> count of final records)."""
        return {token: len(statuses) for token, statuses in self.final_statuses(settle).items()}

    def mock_stats(self):
        """The mock's stats file, written fresh (SIGUSR1) when the mock runs; {} when absent."""
        return self.mock.write_stats() if self.mock else {}

    def wait_all(self, timeout=300):
        deadline = time.time() + timeout
        counts = {}
        while time.time() < deadline:
            if self.tokens.issubset(self.results(settle=False).keys()):
                break
        # Settled: the verdict counts duplicates too, which may still be on their way.
        return self.results()

    def delivered(self):
        return sum(1 for _ in self.results())


def verdict(name, stack, counts, extra="", committed=False, bound=0, why=""):
    """The row; with `committed`, every job's offset must also be committed (the group's view).
    `bound`: the most duplicate final records the row allows (`why` says where it comes from, in
    the note); ALLOWED: reported only. Exceeding it fails the row unless REPORT_ONLY."""
    missing = len(stack.tokens - counts.keys())
    duplicates = sum(c - 1 for t, c in counts.items() if t in stack.tokens and c > 1)
    ok = missing == 0
    if committed:
        behind = stack.uncommitted() if ok else {}
        ok = ok and not behind
        extra = "; ".join(part for part in (extra, f"uncommitted {behind}" if behind else "all committed") if part)
    ok, extra = bounded(ok, duplicates, bound, why, extra)
    return {"scenario": name, "tokens": len(stack.tokens), "results": sum(counts.values()), "missing": missing,
            "duplicates": duplicates, "bound": bound, "verdict": "PASS" if ok else "FAIL", "note": extra}


def bounded(ok, duplicates, bound, why="", extra=""):
    """The verdict and note of a row once its duplicates meet `bound` (see `verdict`)."""
    if bound is ALLOWED:
        check = f"duplicates {duplicates}, allowed (another member took the work over)"
    else:
        check = f"duplicates {duplicates}, bound {bound}{f' ({why})' if why else ''}"
        if duplicates > bound:
            check += ": BOUND EXCEEDED" + (" (report only)" if REPORT_ONLY else "")
            ok = ok and REPORT_ONLY
    return ok, "; ".join(part for part in (check, extra) if part)


def wait_results(stack, at_least, timeout=120):
    deadline = time.time() + timeout
    while time.time() < deadline:
        if len(stack.results(settle=False)) >= at_least:
            return


# About 1,000 notifications/s (4 connections x 10 streams / 40 ms): slow enough that faults land
# in the middle of the campaign, not after it.
SLOW = ["--max-streams", "10", "--latency-ms", "40"]


def wait_ready(worker, timeout=60):
    deadline = time.time() + timeout
    while time.time() < deadline:
        try:
            if OPENER.open(f"http://127.0.0.1:{worker.metrics_port}/readyz", timeout=2).status == 200:
                return
        except Exception:
            pass
        time.sleep(0.2)


def sent(worker):
    return total(scrape(f"127.0.0.1:{worker.metrics_port}"), "pushline_notifications_total")


def scrape_worker(worker, tries=5):
    """The worker's /metrics; a scrape that gets no answer is tried again (a busy machine)."""
    for _ in range(tries):
        metrics = scrape(f"127.0.0.1:{worker.metrics_port}")
        if metrics is not None:
            return metrics
        time.sleep(0.1)
    raise RuntimeError(f"worker on port {worker.metrics_port} does not answer /metrics")


def kill(worker):
    """SIGKILLs `worker` and returns the most its death may duplicate, from its last /metrics
    sample before the kill: `pushline_uncommitted_notifications` (the notifications of its jobs in
    progress and of completed jobs whose offsets are not committed: what the group redoes; only the
    answered ones among them can have a final record twice) plus its requests on the wire then
    (`pushline_apns_open_streams`), a margin for the gauge's age (it is sampled every 250 ms)."""
    metrics = scrape_worker(worker)
    bound = int(total(metrics, "pushline_uncommitted_notifications") + total(metrics, "pushline_apns_open_streams"))
    worker.send_signal(signal.SIGKILL)
    worker.wait()
    return bound


def unanswered(worker):
    """The notifications `worker` holds with no final answer yet, right now: (estimate, in flight,
    uncommitted). Nothing counts them exactly, so: `pushline_inflight_notifications` (admitted, results
    not all acknowledged by Kafka; a gauge sampled every 250 ms) less the notifications finally
    answered whose job has not completed (`pushline_notifications_total`, counted at the final
    answer, minus `pushline_lane_notifications_total`, counted when a job's results are all in
    Kafka: both live counters, since the start). The gauge's age skews it by what was admitted less
    what was released since its sample, so it waits (at most 0.3 s) for a fresh sample first."""
    first = metrics = scrape_worker(worker)
    deadline = time.time() + 0.3
    while time.time() < deadline and (total(metrics, "pushline_inflight_notifications")
                                      == total(first, "pushline_inflight_notifications")):
        time.sleep(0.01)
        metrics = scrape_worker(worker)
    inflight = total(metrics, "pushline_inflight_notifications")
    answered_held = total(metrics, "pushline_notifications_total") - total(metrics, "pushline_lane_notifications_total")
    return (max(0, int(inflight - answered_held)), int(inflight),
            int(total(metrics, "pushline_uncommitted_notifications")))


def scenario_kill3(tokens):
    stack = Stack("kill3", SLOW, tokens)
    try:
        worker = stack.start_worker()
        kills, bounds = [], []
        for _ in range(3):
            # Kill once this worker has sent 3,000 notifications: in the middle of its work (the
            # slow mock gives about 1,000 a second).
            deadline = time.time() + 90
            while sent(worker) < 3000 and time.time() < deadline:
                time.sleep(0.1)
            kills.append(int(sent(worker)))
            bounds.append(kill(worker))
            worker = stack.start_worker()
        counts = stack.wait_all()
        return verdict("worker SIGKILL x3, restarted", stack, counts, f"killed after {kills} notifications",
                       committed=True, bound=sum(bounds), why=f"uncommitted + on the wire at each kill: {bounds}")
    finally:
        stack.close()


def scenario_group(tokens):
    stack = Stack("group", SLOW, tokens)
    try:
        first, second = stack.start_worker(), stack.start_worker()
        deadline = time.time() + 90
        while sent(first) < 2000 and time.time() < deadline:
            time.sleep(0.1)
        # The third's join is a graceful rebalance: only the kill may duplicate.
        bound = kill(first)
        while sent(second) < 4000 and time.time() < deadline + 60:
            time.sleep(0.1)
        stack.start_worker()
        counts = stack.wait_all()
        return verdict("two workers, one killed, a third joins", stack, counts, committed=True, bound=bound,
                       why="uncommitted + on the wire at the kill")
    finally:
        stack.close()


def log_has(worker, text):
    with open(worker.log_path, errors="replace") as handle:
        return text in handle.read()


def rate_over(workers, seconds):
    """Notifications per second the `workers` sent together over `seconds`."""
    before = sum(sent(worker) for worker in workers)
    start = time.time()
    time.sleep(seconds)
    return (sum(sent(worker) for worker in workers) - before) / (time.time() - start)


def scenario_scaleout(tokens):
    """Issue 14's scale-out, as an operator does it: one worker saturated on a campaign, APNs
    latency-bound (4 connections x 7 streams x 50 ms: about 560/s per worker); a second worker
    joins at about 15%. Measures the seconds from its start to owning partitions, the rate of two
    workers against one, and the duplicates of the handover (the verdict's). Then a graceful
    scale-in: SIGTERM to the newcomer at about 60%, and the seconds until the survivor owns
    every partition again."""
    stack = Stack("scaleout", ["--max-streams", "7", "--latency-ms", "50"], max(tokens, 30000), per_job=20)
    try:
        first = stack.start_worker()
        deadline = time.time() + 120
        while sent(first) < len(stack.tokens) * 0.10 and time.time() < deadline:
            time.sleep(0.1)
        one = rate_over([first], 5)
        joined = time.time()
        second = stack.start_worker()
        while not log_has(second, "rebalance: assigned") and time.time() < joined + 60:
            time.sleep(0.1)
        owned = time.time() - joined
        time.sleep(1)
        two = rate_over([first, second], 8)
        while sent(first) + sent(second) < len(stack.tokens) * 0.6 and time.time() < deadline + 120:
            time.sleep(0.2)
        with open(first.log_path, errors="replace") as handle:
            assigned_before = handle.read().count("rebalance: assigned")
        stopping = time.time()
        second.send_signal(signal.SIGTERM)
        while time.time() < stopping + 60:
            with open(first.log_path, errors="replace") as handle:
                text = handle.read()
            if text.count("rebalance: assigned") > assigned_before and "now own 4" in text.split("rebalance: assigned")[-1]:
                break
            time.sleep(0.1)
        takeover = time.time() - stopping
        second.wait(timeout=60)
        counts = stack.wait_all()
        row = verdict("scale-out at 15% then scale-in at 60%, latency-bound", stack, counts, committed=True, extra=
                      f"newcomer owned partitions after {owned:.1f} s; {one:.0f}/s -> {two:.0f}/s ({two / one:.2f}x); "
                      f"survivor owned all after SIGTERM in {takeover:.1f} s", why="graceful join and SIGTERM")
        row.update({"join_to_owning_s": round(owned, 1), "rate_one": round(one), "rate_two": round(two),
                    "ratio": round(two / one, 2), "scale_in_takeover_s": round(takeover, 1)})
        return row
    finally:
        stack.close()


def scenario_leave_during_join(tokens, sig=signal.SIGTERM, delays=(0.1, 0.5, 1.0)):
    """Issue 27: one worker on a campaign; a second joins, and the first gets `sig` `delay` s after
    the second subscribed, while the join's rebalance is under way. The second must own every
    partition and finish the campaign. Once per delay, each on a fresh stack."""
    name = "leave" if sig == signal.SIGTERM else "crash"
    notes = []
    rows = []
    for delay in delays:
        stack = Stack(f"{name}-{delay}", SLOW, tokens)
        try:
            first = stack.start_worker()
            deadline = time.time() + 90
            while sent(first) < 2000 and time.time() < deadline:
                time.sleep(0.1)
            second = stack.start_worker()
            while not log_has(second, "Kafka consumer subscribed") and time.time() < deadline:
                time.sleep(0.02)
            time.sleep(delay)
            # A graceful leave hands over without duplicates; a SIGKILL may redo what the worker
            # reported uncommitted.
            if sig == signal.SIGKILL:
                bound, why = kill(first), "uncommitted + on the wire at the kill"
            else:
                bound, why = 0, "graceful"
                first.send_signal(sig)
            left = time.time()
            while not log_has(second, "now own 4") and time.time() < left + 120:
                time.sleep(0.1)
            owned = time.time() - left
            counts = stack.wait_all(timeout=240)
            row = verdict("", stack, counts, committed=True, bound=bound, why=why)
            rows.append(row)
            notes.append(f"{delay} s: survivor owned all after {owned:.1f} s, missing {row['missing']}, {row['note']}")
        finally:
            stack.close()
    what = "SIGTERM" if sig == signal.SIGTERM else "SIGKILL"
    return {"scenario": f"a worker joins, the first gets {what} during the rebalance",
            "tokens": sum(r["tokens"] for r in rows), "results": sum(r["results"] for r in rows),
            "missing": sum(r["missing"] for r in rows), "duplicates": sum(r["duplicates"] for r in rows),
            "bound": sum(r["bound"] for r in rows), "verdict": "PASS" if all(r["verdict"] == "PASS" for r in rows) else "FAIL",
            "note": "; ".join(notes)}


def scenario_leave(tokens):
    return scenario_leave_during_join(tokens)


def scenario_crash(tokens):
    return scenario_leave_during_join(tokens, signal.SIGKILL, delays=(0.5,))


def scenario_pair_leave(tokens):
    """Issue 27: two workers share a campaign; a third joins, and the first two get SIGTERM
    together 0.5 s after it subscribed, during the join's rebalance. The third must own every
    partition and finish."""
    stack = Stack("pairleave", SLOW, tokens)
    try:
        first, second = stack.start_worker(), stack.start_worker()
        deadline = time.time() + 90
        while (sent(first) < 1000 or sent(second) < 1000) and time.time() < deadline:
            time.sleep(0.1)
        third = stack.start_worker()
        while not log_has(third, "Kafka consumer subscribed") and time.time() < deadline:
            time.sleep(0.02)
        time.sleep(0.5)
        left = time.time()
        first.send_signal(signal.SIGTERM)
        second.send_signal(signal.SIGTERM)
        while not log_has(third, "now own 4") and time.time() < left + 120:
            time.sleep(0.1)
        owned = time.time() - left
        counts = stack.wait_all(timeout=240)
        return verdict("three workers, two get SIGTERM during a join's rebalance", stack, counts,
                       f"the third owned all after {owned:.1f} s", committed=True, why="graceful")
    finally:
        stack.close()


def scenario_lost_join(tokens):
    """A worker's JoinGroup answer is lost, the connection staying up (what the embedded broker
    sometimes does to one member of a round; docs/kafka.md, "A join that is never answered"): the
    proxy drops what the broker sends on the worker's connections from 1 s to 6 s after it
    subscribed, which takes the answer the broker gives after its 3 s round. librdkafka would wait
    max.poll.interval.ms + 3 s for it; the worker must rejoin after its stalledJoinLimit (2 x the
    session timeout + the revoke drain: 22 s here), own every partition and finish. The row tests
    that guard, so its worker has kafka.guard_join_rounds on whatever the broker."""
    stack = Stack("lostjoin", SLOW, tokens, proxy=True, kafka={"guard_join_rounds": True})
    try:
        worker = stack.start_worker()
        deadline = time.time() + 90
        while not log_has(worker, "Kafka consumer subscribed") and time.time() < deadline:
            time.sleep(0.02)
        subscribed = time.time()
        time.sleep(1.0)
        muted = stack.proxy.mute(5.0)
        while not log_has(worker, "now own 4") and time.time() < subscribed + 120:
            time.sleep(0.1)
        owned = time.time() - subscribed
        counts = stack.wait_all(timeout=240)
        rejoined = log_has(worker, "rejoining: join pending")
        row = verdict("a worker's JoinGroup answer is lost", stack, counts,
                      f"{muted} connections muted; {'rejoined, ' if rejoined else 'no rejoin, '}"
                      f"owned all {owned:.1f} s after subscribing", committed=True,
                      why="the answer is lost before the worker owns anything")
        if not rejoined or owned >= 60:
            row["verdict"] = "FAIL"
        return row
    finally:
        stack.close()


# Seconds the proxy cuts the broker in the outage rows: 2 s, and 1.5 and 3 times the session
# timeout of the local stack (6 s), besides the 20 s of the original row.
SESSION_S = int(CLIENT_PROPERTIES["session.timeout.ms"]) / 1000


def scenario_broker_outage(tokens, seconds=20, during_rebalance=False, handover=False, deep=False):
    """Every Kafka client of the run reaches the broker through a proxy that is cut for
    `seconds`: mid-campaign, or (`during_rebalance`) 0.5 s after a second worker subscribed, or
    (`handover`) mid-campaign with a second worker started 1 s into the cut, which joins when the
    broker is back and takes partitions over from the first. `deep`: 100 tokens per job and a
    window of 20,000 notifications with no queue-delay target, so the loss of the assignment
    withdraws thousands of unsent notifications and gives jobs up half answered (the worker keeps
    what they finished: `pushline_lost_records_total`, in the note).

    Bound: with one worker and a cut shorter than the session timeout the worker keeps its
    partitions, 0; longer, the same worker gets them back and should redo at most what it had
    unanswered at the cut (`unanswered`). Where a second member takes partitions, duplicates are
    allowed (the row needs every token's final record and every offset committed)."""
    name = (f"outage{'' if seconds == 20 and not during_rebalance and not handover else f'-{seconds:g}'}"
            f"{'-rebalance' if during_rebalance else ''}{'-handover' if handover else ''}{'-deep' if deep else ''}")
    stack = Stack(name, SLOW, tokens, per_job=100 if deep else 10, proxy=True,
                  worker={"max_inflight": 20000, "max_queue_ms": 0} if deep else None)
    try:
        worker = stack.start_worker()
        workers = [worker]
        deadline = time.time() + 90
        while sent(worker) < 3000 and time.time() < deadline:
            time.sleep(0.1)
        if during_rebalance:
            workers.append(stack.start_worker())
            while not log_has(workers[1], "Kafka consumer subscribed") and time.time() < deadline:
                time.sleep(0.02)
            time.sleep(0.5)
        at_cut = [unanswered(member) for member in workers]
        stack.proxy.cut()
        cut = time.time()
        if handover:
            time.sleep(1)
            workers.append(stack.start_worker())
        time.sleep(max(0.0, seconds - (time.time() - cut)))
        stack.proxy.restore()
        counts = stack.wait_all()
        held, inflight, uncommitted = (sum(figures[i] for figures in at_cut) for i in range(3))
        figures = f"unanswered at cut {held} (in flight {inflight}, uncommitted {uncommitted})"
        # What the workers' memory of lost partitions did (docs/kafka.md, "A lost assignment keeps
        # finished work"): records skipped as finished, records resumed.
        kept = [scrape(f"127.0.0.1:{member.metrics_port}") for member in workers]
        figures += "; lost records skipped {:.0f}, resumed {:.0f}".format(
            sum(total(m, 'pushline_lost_records_total{outcome="skipped"}') for m in kept),
            sum(total(m, 'pushline_lost_records_total{outcome="resumed"}') for m in kept))
        if handover:
            took = log_has(workers[1], "rebalance: assigned")
            figures += "; the second worker took partitions" if took else "; the second worker took NO partition"
        if during_rebalance or handover:
            bound, why = ALLOWED, ""
        elif seconds < SESSION_S:
            bound, why = 0, "shorter than the session timeout"
        else:
            bound, why = held, "unanswered at the cut"
        when = ("during a join's rebalance" if during_rebalance else
                "mid-run, a second worker takes over" if handover else
                "mid-run, 100 tokens/job, a 20,000 window" if deep else "mid-run")
        row = verdict(f"broker unreachable for {seconds:g} s {when}", stack, counts,
                      f"{figures}; network cut by a proxy (memory storage)", committed=True, bound=bound, why=why)
        row.update({"unanswered_at_cut": held, "inflight_at_cut": inflight, "uncommitted_at_cut": uncommitted})
        if handover and not took:
            row["verdict"] = "FAIL"
        return row
    finally:
        stack.close()


def resent_at_closes(stats):
    """What the mock's stats say of its abrupt closes: at most closes x the most streams open on a
    connection went unanswered and were resent (real APNs may have delivered them)."""
    dropped = stats.get("abrupt_closes", 0) * stats.get("max_open_streams", 0)
    return (f"{stats.get('abrupt_closes', '?')} abrupt closes x {stats.get('max_open_streams', '?')} streams: "
            f"at most {dropped} requests unanswered and resent")


def scenario_mock_chaos(tokens):
    """The mock's faults against one worker. Bound: 0 duplicate final records: the pool ends each
    token once and resends only requests without an answer (a GOAWAY's refused streams, an abrupt
    close's open streams). The note gives what the mock's stats imply for a device: at most
    abrupt closes x the most streams open on a connection went unanswered and were resent, which
    real APNs may have delivered before the close (the mock delivers nothing it did not answer)."""
    flags = ["--rate-503", "0.10", "--rate-429", "0.05", "--latency-ms", "1", "--jitter-ms", "40",
             "--goaway-every", "300", "--close-every", "2000", "--limit-drop-every", "500", "--limit-drop-ms", "50"]
    stack = Stack("mockchaos", flags, tokens)
    try:
        stack.start_worker()
        counts = stack.wait_all()
        stats = stack.mock_stats()
        return verdict("mock: 10% 503, 5% 429, jitter, GOAWAY/300, closes, limit drops", stack, counts,
                       f"limit violations {stats.get('limit_violations', '?')}; {resent_at_closes(stats)}, "
                       f"{stats.get('goaways_sent', '?')} GOAWAYs",
                       why="the pool resends only unanswered requests")
    finally:
        stack.close()


def scenario_mock_closes(tokens):
    """The mock closes each connection abruptly (TCP, no GOAWAY) after 200 streams, with at most 10
    on the wire then (in `mockchaos` the GOAWAY every 300 streams comes first, so no connection is
    ever closed that way). Bound as there: 0 duplicate final records; the note gives how many
    requests went unanswered at the closes (resent; real APNs may have delivered them)."""
    stack = Stack("mockcloses", SLOW + ["--jitter-ms", "20", "--close-every", "200"], tokens)
    try:
        stack.start_worker()
        counts = stack.wait_all()
        return verdict("mock: abrupt TCP close every 200 streams, 10 open", stack, counts,
                       resent_at_closes(stack.mock_stats()), why="the pool resends only unanswered requests")
    finally:
        stack.close()


def scenario_apns_down_at_start(tokens):
    stack = Stack("apnsdown", [], tokens, mock_running=False)
    try:
        worker = stack.start_worker()
        # Not a fixed wait: the worker has joined its group (/readyz names APNs, not the group),
        # taken jobs (notifications in flight) and failed to connect (a connection backing off),
        # so it would have produced results by now had it burned them while APNs was down.
        deadline = time.time() + 60
        ready, reason, early = None, "", None
        while time.time() < deadline:
            try:
                ready = OPENER.open(f"http://127.0.0.1:{worker.metrics_port}/readyz", timeout=2).status
            except urllib.error.HTTPError as error:
                ready, reason = error.code, error.read().decode(errors="replace")
            except OSError:
                ready = None
            metrics = scrape(f"127.0.0.1:{worker.metrics_port}")
            if ("no active APNs connection" in reason and total(metrics, "pushline_inflight_notifications") > 0
                    and total(metrics, 'pushline_apns_connections{app="default",state="backing_off"}') > 0):
                early = len(stack.results())
                break
            time.sleep(0.2)
        stack.start_mock()
        counts = stack.wait_all()
        ok_before = ready == 503 and early == 0
        result = verdict("APNs unreachable at start, then up", stack, counts,
                         f"/readyz {ready} and {early} results while down (jobs taken, connect failed)",
                         why="no Kafka fault: one final answer per token")
        if not ok_before:
            result["verdict"] = "FAIL"
        return result
    finally:
        stack.close()


def mock_unregistered(token, fraction):
    """Whether the mock's --unregistered-fraction picks `token` (UnregisteredRule: FNV-1a of the
    lower-cased token, splitmix-finalised, top 53 bits below the fraction)."""
    mask = (1 << 64) - 1
    value = 0xcbf29ce484222325
    for byte in token.lower().encode():
        value = ((value ^ byte) * 0x100000001b3) & mask
    value ^= value >> 33
    value = (value * 0xff51afd7ed558ccd) & mask
    value ^= value >> 33
    return (value >> 11) / float(1 << 53) < fraction


def scenario_apns_outage(status, reason, tokens, seconds=20, unregistered=0.02):
    """APNs refuses everything with `status`/`reason` for `seconds` from the first request, then
    heals. The worker must hold the app (not burn the campaign into final errors), say so on
    /readyz, and resume: every token one final record, at most 1% final `status`, the rest 200,
    or 410 exactly where the mock's unregistered fraction says."""
    name = f"apns{status}"
    flags = SLOW + ["--unregistered-fraction", str(unregistered), "--outage", f"{status}:{reason}:{seconds}"]
    stack = Stack(name, flags, max(tokens, 4000))
    try:
        worker = stack.start_worker()
        poller = ReadyzPoller(worker.metrics_port)
        try:
            counts = stack.wait_all(timeout=300 + seconds)
        finally:
            samples = poller.stop()
        statuses = stack.final_statuses()
        stats = stack.mock_stats()
        result = verdict(f"APNs {status} {reason} for {seconds} s from the first request", stack, counts,
                         why="no Kafka fault: one final answer per token")

        finals = {token: statuses[token][-1] for token in stack.tokens if token in statuses}
        refused = sum(1 for value in finals.values() if value == status)
        allowed = len(stack.tokens) // 100
        wrong = {}
        for token, value in finals.items():
            if value == status:
                continue
            expected = 410 if mock_unregistered(token, unregistered) else 200
            if value != expected:
                key = f"{value} (expected {expected})"
                wrong[key] = wrong.get(key, 0) + 1
        by_status = {}
        for value in finals.values():
            by_status[value] = by_status.get(value, 0) + 1

        started, ends = stats.get("outage_started_at"), stats.get("outage_ends_at")
        window = [(at, code, body) for at, code, body in samples
                  if started is None or started <= at <= (ends or started + seconds)]
        held = [(at, code, body) for at, code, body in window if code != 200 and "held" in body]
        first_held = f"+{held[0][0] - started:.1f} s" if held and started else ("yes" if held else "never")

        ok = (result["verdict"] == "PASS" and refused <= allowed
              and not wrong and bool(held) and stats.get("outage_answers", 0) > 0)
        result["verdict"] = "PASS" if ok else "FAIL"
        result["note"] = (f"{result['note']}; final statuses {dict(sorted(by_status.items()))}, final {status} {refused} (at most {allowed}), "
                          f"unexpected {wrong or 0}; mock outage answers {stats.get('outage_answers', '?')}; "
                          f"/readyz held during the outage: {first_held} ({len(samples)} polls)")
        with open(os.path.join(stack.dir, "readyz.json"), "w") as handle:
            json.dump({"outage_started_at": started, "outage_ends_at": ends, "samples": samples}, handle, indent=1)
        return result
    finally:
        stack.close()


def scenario_apns_403(tokens):
    return scenario_apns_outage(403, "InvalidProviderToken", tokens)


def scenario_apns_503(tokens):
    return scenario_apns_outage(503, "ServiceUnavailable", tokens)


def scenario_fuzz(count):
    output = subprocess.run([BENCH, "fuzz", "--count", str(count)], capture_output=True, text=True, timeout=900)
    result = json.loads(output.stdout) if output.returncode == 0 else {}
    ok = (output.returncode == 0 and result.get("decoded", 0) + result.get("rejected", 0) == count
          and result.get("rejected_without_reason", 1) == 0)
    return {"scenario": f"decoder fuzz: {count:,} mutated jobs", "tokens": count,
            "results": result.get("decoded", 0) + result.get("rejected", 0), "missing": count - result.get("decoded", 0) - result.get("rejected", 0),
            "duplicates": 0, "bound": 0, "verdict": "PASS" if ok else "FAIL",
            "note": f"{result.get('rejected', '?')} rejected with a reason, {result.get('decoded', '?')} decoded, {result.get('seconds', '?')} s"}


def rss_and_fds(pid):
    rss = 0
    with open(f"/proc/{pid}/status") as handle:
        for line in handle:
            if line.startswith("VmRSS:"):
                rss = int(line.split()[1]) * 1024
    return rss, len(os.listdir(f"/proc/{pid}/fd"))


def histogram_p99(port, base="pushline_end_to_end_latency_seconds"):
    """Cumulative (le, count) buckets of a histogram from /metrics."""
    return buckets(scrape(f"127.0.0.1:{port}"), base)


def quantile_between(before, after, fraction=0.99):
    deltas = sorted((le, after.get(le, 0) - before.get(le, 0)) for le in after)
    total = deltas[-1][1] if deltas else 0
    for le, count in deltas:
        if count >= fraction * total and total > 0:
            return le
    return None


def scenario_soak(minutes, rate):
    """Jobs of 100 tokens produced at `rate` tokens/s for `minutes`; the worker's RSS, open
    descriptors, in-flight count and p99 sampled every 30 s must stay flat."""
    from confluent_kafka import Producer
    stack = Stack("soak", [], 0)
    try:
        worker = stack.start_worker()
        wait_ready(worker)
        producer = Producer({"bootstrap.servers": f"127.0.0.1:{stack.client_port}", "linger.ms": 20, "log_level": 0})
        payload = {"aps": {"alert": {"title": "Soak", "body": "steady"}}}
        jobs_per_second = max(1, rate // 100)
        start_time = time.time()
        job = 0
        samples = []
        last_sample = start_time - 30
        histogram_before = histogram_p99(worker.metrics_port)
        while time.time() - start_time < minutes * 60:
            second = time.time()
            for _ in range(jobs_per_second):
                tokens = ["%056x%08x" % (job, i) for i in range(100)]
                stack.tokens.update(tokens)
                producer.produce("chaos.jobs", key=f"soak-{job}",
                                 value=json.dumps({"id": f"soak-{job}", "tokens": tokens, "payload": payload}, separators=(",", ":")))
                job += 1
            producer.poll(0)
            if second - last_sample >= 30:
                last_sample = second
                rss, fds = rss_and_fds(worker.pid)
                histogram_after = histogram_p99(worker.metrics_port)
                p99 = quantile_between(histogram_before, histogram_after)
                histogram_before = histogram_after
                samples.append({"t": int(second - start_time), "rss_mb": round(rss / 2**20, 1), "fds": fds,
                                "inflight": int(sent_gauge(worker, "pushline_inflight_notifications")), "p99_s": p99})
                log(f"  soak {samples[-1]}")
            time.sleep(max(0, 1 - (time.time() - second)))
        producer.flush(60)
        # Millions of result records are too many to read back here: the worker's own count of
        # jobs whose results Kafka acknowledged says whether every job finished (one worker, no
        # restarts, so each job is counted once).
        deadline = time.time() + 600
        while sent_gauge(worker, 'pushline_jobs_total{outcome="completed"}') < job and time.time() < deadline:
            time.sleep(1)
        completed = int(sent_gauge(worker, 'pushline_jobs_total{outcome="completed"}'))
        counts = {token: 1 for token in stack.tokens} if completed == job else {}
        first, last = samples[1] if len(samples) > 1 else samples[0], samples[-1]
        flat = (last["rss_mb"] <= first["rss_mb"] * 1.25 + 20 and abs(last["fds"] - first["fds"]) <= 8
                and (last["p99_s"] or 0) <= 2 * max(first["p99_s"] or 0.001, 0.05))
        result = verdict(f"soak: {rate:,} tokens/s for {minutes} min", stack, counts,
                         f"RSS {first['rss_mb']} -> {last['rss_mb']} MB, fds {first['fds']} -> {last['fds']}, "
                         f"p99 {first['p99_s']} -> {last['p99_s']} s")
        if not flat:
            result["verdict"] = "FAIL"
        with open(os.path.join(stack.dir, "samples.json"), "w") as handle:
            json.dump(samples, handle, indent=2)
        return result
    finally:
        stack.close()


def scenario_cancel(tokens):
    """Issue 53's cancel: a campaign (jobs of 100 tokens, the mock latency-bound at about 400
    notifications a second per worker: 4 connections x 10 streams x 100 ms, so the campaign runs
    long enough for a cancel command slow to start on a loaded host to land mid-campaign) on two workers,
    cancelled with `pushline cancel` once about 30% of its results are in. Measures the cancel
    latency: from the cancel record's write (its Kafka timestamp, which the command prints) to the
    last request of the campaign that reached the mock (`--record`'s arrival times). Every token
    ends with exactly one final record, delivered or `status 0, reason "cancelled"`; every job's
    offset is committed; the row fails when a request arrived more than 1 s after the write."""
    recording = os.path.join(RUN, "cancel", "requests.jsonl")
    stack = Stack("cancel", ["--max-streams", "10", "--latency-ms", "100", "--record", recording], tokens, per_job=100,
                  campaign="chaos-cancel")
    try:
        first, second = stack.start_worker(), stack.start_worker()
        deadline = time.time() + 120
        # Polled every 100 ms (not the reader's usual second), so the cancel lands near 30%.
        while len(stack._statuses) < 0.3 * len(stack.tokens) and time.time() < deadline:
            stack._reader().poll(0.1, stack._read)
        at_cancel = len(stack._statuses)
        command = subprocess.run([BIN, "cancel", "--config", stack.config()[0], "--campaign", "chaos-cancel",
                                  "--reason", "chaos row"], capture_output=True, text=True)
        match = re.search(r"written_ms (\d+)", command.stdout)
        if command.returncode != 0 or not match:
            raise RuntimeError(f"pushline cancel exited {command.returncode}: {command.stdout} {command.stderr}")
        written = int(match.group(1))
        counts = stack.wait_all()
        # The recording is whole once the mock has stopped.
        stack.mock.stop()
        arrivals = []
        with open(recording) as handle:
            for line in handle:
                arrivals.append(json.loads(line)["received_ms"])
        last = max(arrivals) if arrivals else written
        late = sum(1 for at in arrivals if at > written + 1000)
        cancelled = sum(1 for statuses in stack.final_statuses().values() if statuses == [0])
        # Each worker's "cancel seen" line says how long after the write it applied the cancel.
        seen = []
        for worker in (first, second):
            with open(worker.log_path, errors="replace") as handle:
                seen += [int(ms) for ms in re.findall(r'"msg":"cancel seen".*?"seen_after_ms":"(-?\d+)"', handle.read())]
        row = verdict("cancel a campaign at ~30% on two workers", stack, counts, committed=True,
                      extra=(f"cancel latency {last - written} ms (write to last request at the mock); "
                             f"{late} requests > 1 s after; {at_cancel} results at the cancel; "
                             f"{cancelled} tokens cancelled; applied {seen} ms after the write by the 2 workers"),
                      why="no fault: one final record per token")
        if late or len(seen) != 2 or cancelled == 0:
            row["verdict"] = "FAIL"
        return row
    finally:
        stack.close()


def sent_gauge(worker, name):
    """The sum of a metric's series (or one series, when `name` includes its labels)."""
    return total(scrape(f"127.0.0.1:{worker.metrics_port}"), name)


SCENARIOS = {
    "kill3": scenario_kill3,
    "group": scenario_group,
    "scaleout": scenario_scaleout,
    "outage": scenario_broker_outage,
    "leave": scenario_leave,
    "crash": scenario_crash,
    "pairleave": scenario_pair_leave,
    "lostjoin": scenario_lost_join,
    "outage2": lambda tokens: scenario_broker_outage(tokens, 2),
    "outage1.5x": lambda tokens: scenario_broker_outage(tokens, 1.5 * SESSION_S),
    "outage3x": lambda tokens: scenario_broker_outage(tokens, 3 * SESSION_S),
    "outage2r": lambda tokens: scenario_broker_outage(tokens, 2, during_rebalance=True),
    "outage1.5xr": lambda tokens: scenario_broker_outage(tokens, 1.5 * SESSION_S, during_rebalance=True),
    "outage3xr": lambda tokens: scenario_broker_outage(tokens, 3 * SESSION_S, during_rebalance=True),
    "outage3x-handover": lambda tokens: scenario_broker_outage(tokens, 3 * SESSION_S, handover=True),
    "outage-deep": lambda tokens: scenario_broker_outage(tokens, 20, deep=True),
    "mockchaos": scenario_mock_chaos,
    "mockcloses": scenario_mock_closes,
    "apnsdown": scenario_apns_down_at_start,
    "apns403": scenario_apns_403,
    "apns503": scenario_apns_503,
    "cancel": scenario_cancel,
}


def main():
    global GROUP_PROTOCOL, RUN
    parser = argparse.ArgumentParser()
    parser.add_argument("--only", default="")
    parser.add_argument("--tokens", type=int, default=20000)
    parser.add_argument("--fuzz", type=int, default=1_000_000)
    parser.add_argument("--soak-minutes", type=int, default=10)
    parser.add_argument("--soak-rate", type=int, default=30_000, help="tokens/s; about half of what scripts/bench measured")
    parser.add_argument("--broker", choices=stack.BROKER_KINDS, default=stack.BROKER)
    parser.add_argument("--group-protocol", choices=stack.GROUP_PROTOCOLS, default=GROUP_PROTOCOL)
    parser.add_argument("--run-dir", default=RUN, help="where the rows' stacks, logs and results.json go (runs side by side each need their own)")
    options = parser.parse_args()
    stack.BROKER, GROUP_PROTOCOL, RUN = options.broker, options.group_protocol, os.path.abspath(options.run_dir)
    os.makedirs(RUN, exist_ok=True)
    log(f"broker {stack.BROKER}, group protocol {GROUP_PROTOCOL}")
    chosen = [name for name in list(SCENARIOS) + ["fuzz", "soak"] if not options.only or name in options.only.split(",")]
    rows = []
    for name in chosen:
        log(f"scenario {name}")
        started = time.time()
        try:
            if name == "fuzz":
                row = scenario_fuzz(options.fuzz)
            elif name == "soak":
                row = scenario_soak(options.soak_minutes, options.soak_rate)
            else:
                row = SCENARIOS[name](options.tokens)
        except Exception as error:
            row = {"scenario": name, "tokens": 0, "results": 0, "missing": "?", "duplicates": "?", "bound": "?", "verdict": "FAIL",
                   "note": f"error: {error}"}
        row["seconds"] = round(time.time() - started)
        row.update({"row": name, "broker": stack.BROKER, "group_protocol": GROUP_PROTOCOL})
        log(f"  {row}")
        rows.append(row)
    stop_all()
    print()
    print(f"broker {stack.BROKER}, group protocol {GROUP_PROTOCOL}")
    print(f"{'scenario':<62}{'tokens':>9}{'results':>9}{'missing':>9}{'dups':>7}{'bound':>7}{'s':>5}  verdict")
    for row in rows:
        bound = "-" if row.get("bound", 0) is ALLOWED else row.get("bound", 0)
        print(f"{row['scenario']:<62}{row['tokens']:>9}{row['results']:>9}{row['missing']:>9}{row['duplicates']:>7}"
              f"{bound:>7}{row['seconds']:>5}  {row['verdict']}"
              + (f"  ({row['note']})" if row.get("note") else ""))
    with open(os.path.join(RUN, "results.json"), "w") as handle:
        json.dump(rows, handle, indent=2)
    sys.exit(0 if all(row["verdict"] == "PASS" for row in rows) else 1)


if __name__ == "__main__":
    exit_on_sigterm()
    main()
