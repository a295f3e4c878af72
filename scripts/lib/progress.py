"""Live progress of a running worker, read from its /metrics endpoint.

usage: progress.py HOST:PORT JOBS TOKENS WORKER_PID [DONE_FILE]
Prints one line per second (sent, rate, in flight, results, invalidations) until every job is
complete, the worker exits, or ten minutes pass. Exit 0 when every job completed, 1 otherwise.
DONE_FILE, when given, receives the time (unix seconds) at which every job was seen complete.
"""
import os
import sys
import time

from prometheus import scrape, total

address, jobs, tokens, pid = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
done_file = sys.argv[5] if len(sys.argv) > 5 else None


def alive():
    try:
        os.kill(pid, 0)
        return True
    except OSError:
        return False


tty = sys.stdout.isatty()
start = time.time()
last_sent, last_time = 0.0, start
done = False
while time.time() - start < 600:
    time.sleep(1.0)
    if not alive():
        print("\nprogress: the worker exited early; see its log", file=sys.stderr)
        break
    m = scrape(address)
    if m is None:
        continue
    sent = total(m, "pushline_notifications_total")
    now = time.time()
    rate = (sent - last_sent) / (now - last_time)
    last_sent, last_time = sent, now
    completed = total(m, "pushline_jobs_total")
    gauges = m
    if completed >= jobs:
        if done_file:
            with open(done_file, "w") as handle:
                handle.write(f"{now:.3f}")
        # The worker samples its in-flight gauge every 250 ms: wait for a sample taken after the
        # last job, so the final line does not show work that has already finished.
        time.sleep(0.4)
        gauges = scrape(address) or m
    line = (f"sent {int(sent):>9,}/{tokens:,}  rate {int(rate):>7,}/s  in flight {int(total(gauges, 'pushline_inflight_notifications')):>6,}"
            f"  jobs done {int(completed):,}/{jobs:,}  invalidations {int(total(m, 'pushline_invalidations_total')):,}")
    print(("\r" + line) if tty else line, end="" if tty else "\n", flush=True)
    if completed >= jobs:
        done = True
        break
print()
sys.exit(0 if done else 1)
