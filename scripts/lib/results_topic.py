"""The records on a results topic, read from the beginning: the demo's summary and the chaos
checks count them."""
import json
import time

from confluent_kafka import Consumer, TopicPartition


def _consumer(bootstrap, topic):
    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": f"reader-{time.time()}",
                         "enable.auto.commit": False, "log_level": 0})
    partitions = len(consumer.list_topics(topic, timeout=10).topics[topic].partitions)
    consumer.assign([TopicPartition(topic, partition, 0) for partition in range(partitions)])
    return consumer


def read_records(bootstrap, topic, idle_polls=2):
    """Every record on every partition of `topic`, decoded from JSON, read until `idle_polls`
    one-second polls in a row bring nothing new."""
    reader = ResultsReader(bootstrap, topic)
    try:
        records = []
        reader.catch_up(idle_polls, records.append)
        return records
    finally:
        reader.close()


class ResultsReader:
    """Reads `topic` from the beginning and then onwards, once: each call hands over only the
    records that arrived since the last one (a chaos row polls every second or two while a
    campaign of thousands of records runs; reading the topic anew each time cost more than the
    worker under test)."""

    def __init__(self, bootstrap, topic):
        self.consumer = _consumer(bootstrap, topic)

    def poll(self, seconds, handle):
        """Hands each record that arrives within about `seconds` to `handle`; the number read."""
        count = 0
        deadline = time.time() + seconds
        while True:
            messages = self.consumer.consume(10000, max(0.0, min(1.0, deadline - time.time())))
            for message in messages:
                if not message.error():
                    handle(json.loads(message.value()))
                    count += 1
            if not messages or time.time() >= deadline:
                return count

    def catch_up(self, idle_polls, handle):
        """Reads until `idle_polls` one-second polls in a row bring nothing new."""
        idle = 0
        while idle < idle_polls:
            idle = 0 if self.poll(1.0, handle) else idle + 1

    def close(self):
        self.consumer.close()
