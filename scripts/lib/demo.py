"""The demo's campaign (scripts/demo builds and calls this): the local stack from stack.py, a
sample campaign, one worker with a live progress line, and the summary. Stops all it started.

usage: demo.py TOKENS TOKENS_PER_JOB [full|compact]
"""
import json
import os
import subprocess
import sys
import threading
import time

import stack

HERE = os.path.dirname(os.path.abspath(__file__))
RUN = os.path.join(stack.ROOT, ".run/demo")
PY = sys.executable


def say(message):
    print(f"demo: {message}", flush=True)


def campaign(path, tokens, per_job):
    with open(path, "w") as handle:
        job, sent = 0, 0
        while sent < tokens:
            n = min(per_job, tokens - sent)
            batch = ["%056x%08x" % (job, i) for i in range(n)]
            handle.write(json.dumps({"id": "demo-%d" % job, "tokens": batch,
                                     "payload": {"aps": {"alert": {"title": "Sale", "body": "50% off today"}, "sound": "default"}}},
                                    separators=(",", ":")) + "\n")
            job += 1
            sent += n
    return job


def main(tokens, per_job, results="full"):
    subprocess.run(["rm", "-rf", RUN])
    local = stack.LocalStack(RUN, "DEMOKEY123", "DEMOTEAM12")
    try:
        say("starting the embedded Kafka broker")
        broker = local.start_broker()
        for topic, partitions in (("push.jobs", 4), ("push.results", 4), ("push.jobs.dlq", 1), ("push.invalidations", 2)):
            sys.stderr.write(broker.create_topic(topic, partitions).stdout)

        say("starting the mock APNs (3% unregistered tokens, 2-5 ms latency)")
        local.generate_key()
        local.start_mock(["--topic", stack.BUNDLE_ID, "--unregistered-fraction", "0.03", "--latency-ms", "2", "--jitter-ms", "3"])
        config, metrics_port = local.config("config", "pushline-demo", topics={"invalidations_topic": "push.invalidations"},
                                            overrides={"worker": {"results": results}})

        jobs = (tokens + per_job - 1) // per_job
        say(f"enqueuing a campaign of {tokens} tokens in {jobs} jobs")
        jobs_path = os.path.join(RUN, "campaign.ndjson")
        campaign(jobs_path, tokens, per_job)
        subprocess.run([stack.BIN, "enqueue", "--config", config, "--file", jobs_path], check=True)

        say(f"running one worker (worker.results: {results})")
        start = time.time()
        worker = local.start_worker(config, metrics_port, name="worker")
        # Reaped as soon as it exits, so progress.py sees it gone (a zombie still answers kill 0).
        threading.Thread(target=worker.process.wait, daemon=True).start()
        done_at = os.path.join(RUN, "done-at")
        subprocess.run([PY, os.path.join(HERE, "progress.py"), f"127.0.0.1:{metrics_port}", str(jobs), str(tokens),
                        str(worker.pid), done_at])
        try:
            with open(done_at) as handle:
                end = float(handle.read())
        except (OSError, ValueError):
            end = time.time()
        worker.stop()
        local.mock.write_stats()
        return subprocess.run([PY, os.path.join(HERE, "summary.py"), broker.bootstrap_servers, str(tokens), str(jobs),
                               str(start), str(end), local.mock.stats_file, results]).returncode
    finally:
        local.close()


if __name__ == "__main__":
    stack.exit_on_sigterm()
    try:
        if len(sys.argv) > 3 and sys.argv[3] not in ("full", "compact"):
            raise stack.StackError(f"--results {sys.argv[3]}: must be full or compact")
        sys.exit(main(int(sys.argv[1]), int(sys.argv[2]), *sys.argv[3:4]))
    except KeyboardInterrupt:
        sys.exit(130)
    except stack.StackError as error:
        print(f"demo: {error}", file=sys.stderr)
        sys.exit(1)
