"""The records on a results topic, read from the beginning: the demo's summary and the chaos
checks count them."""
import json
import time

from confluent_kafka import Consumer, TopicPartition


def read_records(bootstrap, topic, idle_polls=2):
    """Every record on every partition of `topic`, decoded from JSON, read until `idle_polls`
    one-second polls in a row bring nothing new."""
    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": f"reader-{time.time()}",
                         "enable.auto.commit": False, "log_level": 0})
    try:
        partitions = len(consumer.list_topics(topic, timeout=10).topics[topic].partitions)
        consumer.assign([TopicPartition(topic, partition, 0) for partition in range(partitions)])
        records, idle = [], 0
        while idle < idle_polls:
            messages = consumer.consume(10000, 1.0)
            if not messages:
                idle += 1
                continue
            idle = 0
            records.extend(json.loads(message.value()) for message in messages if not message.error())
        return records
    finally:
        consumer.close()
