"""Produce-to-result latency for scripts/bench: jobs produced one by one at a set rate, each
timed from its produce call to the moment its delivery record is read from the results topic.

The results topic is read by key (the job id) without parsing values, so the reader keeps up
with a campaign's records; it uses the embedded broker's 10 ms fetch wait like every client of
the local stack (docs/kafka.md)."""
import threading
import time

from confluent_kafka import Consumer, Producer

from stack import CLIENT_PROPERTIES


class LatencyProbe:
    """Reads `results_topic` from its end; `send` produces a job and `wait` returns latencies."""

    def __init__(self, brokers, results_topic, group):
        self.brokers = brokers
        self.seen = {}
        self.lock = threading.Lock()
        self.watched = set()
        self.running = True
        self.assigned = threading.Event()
        consumer = Consumer({"bootstrap.servers": brokers, "group.id": group, "auto.offset.reset": "latest",
                             "enable.auto.commit": False, "log.connection.close": False, **CLIENT_PROPERTIES})
        consumer.subscribe([results_topic], on_assign=lambda *_: self.assigned.set())
        self.consumer = consumer
        self.thread = threading.Thread(target=self._read, daemon=True)
        self.thread.start()
        if not self.assigned.wait(60):
            raise RuntimeError("latency probe: no partitions of the results topic within 60 s")
        # librdkafka fetches "latest" after the assignment: a moment for the first fetch position.
        time.sleep(1)
        self.producer = Producer({"bootstrap.servers": brokers, "linger.ms": 0, "log.connection.close": False})

    def _read(self):
        while self.running:
            for message in self.consumer.consume(num_messages=2000, timeout=0.05):
                if message.error():
                    continue
                key = message.key()
                if key is None:
                    continue
                job = key.decode()
                if job in self.watched:
                    with self.lock:
                        self.seen.setdefault(job, time.monotonic())

    def warm_up(self, topic, timeout=120):
        """One job to `topic`, untimed, until its result is read: a new producer's first record
        waits for metadata, and a worker's first for its group join."""
        self.watched.add("warmup")
        self.producer.produce(topic, key=b"warmup", value=b'{"id":"warmup","token":"' + b"f" * 64 + b'","payload":{"aps":{}}}')
        self.producer.flush(30)
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            with self.lock:
                if "warmup" in self.seen:
                    return
            time.sleep(0.1)
        raise RuntimeError("latency probe: the warm-up job got no result")

    def run(self, topic, prefix, count, rate):
        """Produces `count` single-token jobs to `topic` at `rate` per second; returns the send times."""
        sent = {}
        interval = 1.0 / rate
        start = time.monotonic()
        for index in range(count):
            job = f"{prefix}-{index}"
            self.watched.add(job)
            value = ('{"id":"%s","token":"%056x%08x","payload":{"aps":{"alert":"code"}}}' % (job, 0xA11CE, index)).encode()
            target = start + index * interval
            delay = target - time.monotonic()
            if delay > 0:
                time.sleep(delay)
            sent[job] = time.monotonic()
            self.producer.produce(topic, key=job.encode(), value=value)
            self.producer.poll(0)
        self.producer.flush(30)
        return sent

    def latencies(self, sent, timeout=120):
        """Waits for every job of `sent` to be seen; returns {"p50_ms", "p99_ms", "max_ms", "count", "missing"}."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            with self.lock:
                if all(job in self.seen for job in sent):
                    break
            time.sleep(0.1)
        with self.lock:
            values = sorted((self.seen[job] - at) * 1000 for job, at in sent.items() if job in self.seen)
        if not values:
            return {"count": 0, "missing": len(sent)}
        return {"count": len(values), "missing": len(sent) - len(values),
                "p50_ms": round(values[len(values) // 2], 1),
                "p99_ms": round(values[max(0, (len(values) * 99) // 100 - 1)], 1),
                "max_ms": round(values[-1], 1)}

    def close(self):
        self.running = False
        self.thread.join(5)
        self.consumer.close()
