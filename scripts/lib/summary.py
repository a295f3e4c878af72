"""Summary of a campaign from the records on push.results, in either results mode: the outcomes
are counted from the job_done records (one per job; a crash may repeat one, so the last per job
counts), which a compact run has as well as a full one.

usage: summary.py BROKER TOKENS JOBS START END MOCK_STATS_JSON [full|compact]
"""
import json
import sys
from collections import Counter

from results_topic import read_records

broker, tokens, jobs, start, end, stats_path = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), float(sys.argv[4]), float(sys.argv[5]), sys.argv[6]
mode = sys.argv[7] if len(sys.argv) > 7 else "full"

deliveries, invalidations, rejected, done, records = [], 0, 0, {}, 0
for record in read_records(broker, "push.results", idle_polls=3):
    records += 1
    kind = record.get("type")
    if kind == "delivery":
        deliveries.append(record)
    elif kind == "token_invalidated":
        invalidations += 1
    elif kind == "rejected":
        rejected += 1
    elif kind == "job_done":
        done[record["job_id"]] = record

by_outcome = Counter()
for summary in done.values():
    for outcome, count in summary["counts"].items():
        status, _, reason = outcome.partition(" ")
        by_outcome[(int(status), reason or "-")] += count
finished = sum(by_outcome.values())
retried = sum(1 for d in deliveries if d["attempts"] > 1)
unique = len({d.get("token") for d in deliveries})


def percentile(values, fraction):
    if not values:
        return 0.0
    return values[min(len(values) - 1, int(fraction * len(values)))]


wall = end - start
print()
print(f"Pushline demo summary (worker.results: {mode})")
print("=" * 52)
print(f"{'status':>6}  {'reason':<28}{'tokens':>12}")
for (status, reason), count in sorted(by_outcome.items()):
    print(f"{status:>6}  {reason:<28}{count:>12,}")
print("-" * 52)
print(f"{'job_done records (of ' + format(jobs, ',') + ' jobs)':<36}{len(done):>12,}")
print(f"{'tokens with a final outcome':<36}{finished:>12,}")
print(f"{'delivery records':<36}{len(deliveries):>12,}")
if mode == "full":
    print(f"{'distinct tokens (of ' + format(tokens, ',') + ')':<36}{unique:>12,}")
    print(f"{'tokens retried':<36}{retried:>12,}")
print(f"{'token_invalidated records':<36}{invalidations:>12,}")
print(f"{'rejected jobs':<36}{rejected:>12,}")
print(f"{'results-topic records per job':<36}{records / max(jobs, 1):>12.2f}")
if mode == "full":
    latencies = sorted(d["latency_ms"] for d in deliveries)
    print(f"{'APNs latency p50 / p99 (ms)':<36}{percentile(latencies, 0.5):>5.1f} / {percentile(latencies, 0.99):.1f}")
else:
    medians = sorted(s["latency_ms"]["p50"] for s in done.values())
    worst = max((s["latency_ms"]["max"] for s in done.values()), default=0.0)
    print(f"{'APNs latency: median job p50 / max':<36}{percentile(medians, 0.5):>5.1f} / {worst:.1f}")
print(f"{'wall time (worker start to done)':<36}{wall:>11.1f}s")
print(f"{'throughput':<36}{finished / wall:>10,.0f}/s")
try:
    with open(stats_path) as handle:
        stats = json.load(handle)
    print(f"{'mock: max open streams / limit':<36}{stats['max_open_streams']:>6} / {stats['max_advertised_limit']}")
    print(f"{'mock: stream-limit violations':<36}{stats['limit_violations']:>12}")
except (OSError, KeyError, ValueError):
    pass
missing = tokens - finished
if mode == "full":
    missing = max(missing, tokens - unique)
print("=" * 52)
print("every token has a result" if missing == 0 and len(done) == jobs else
      f"MISSING RESULTS FOR {missing} TOKENS, {jobs - len(done)} JOBS")
sys.exit(0 if missing == 0 and len(done) == jobs else 1)
