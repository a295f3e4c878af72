"""A worker's /metrics (Prometheus text format), read the same way by every script."""
import urllib.request

# Loopback only: never through a proxy from the environment.
OPENER = urllib.request.build_opener(urllib.request.ProxyHandler({}))


def scrape(address):
    """{series: value} from http://ADDRESS/metrics (series named with their labels, as printed),
    or None when nothing answers."""
    try:
        text = OPENER.open(f"http://{address}/metrics", timeout=2).read().decode()
    except Exception:
        return None
    metrics = {}
    for line in text.splitlines():
        if line.startswith("#") or " " not in line:
            continue
        name, value = line.rsplit(" ", 1)
        try:
            metrics[name] = float(value)
        except ValueError:
            pass
    return metrics


def total(metrics, name):
    """The sum of a metric's series, or one series when `name` includes its labels."""
    if not metrics:
        return 0.0
    if name.endswith("}"):
        return metrics.get(name, 0.0)
    return sum(value for key, value in metrics.items() if key == name or key.startswith(name + "{"))


def buckets(metrics, base):
    """A histogram's cumulative counts by upper bound (`le`), summed over its other labels."""
    result = {}
    for key, value in (metrics or {}).items():
        if key.startswith(base + "_bucket{"):
            le = key.split('le="', 1)[1].split('"', 1)[0]
            bound = float("inf") if le == "+Inf" else float(le)
            result[bound] = result.get(bound, 0.0) + value
    return result
