#ifndef PUSHLINE_MOCK_KAFKA_H
#define PUSHLINE_MOCK_KAFKA_H
// Settings of librdkafka's mock cluster that are newer than the Debian headers (2.0.2) the project
// builds against: the run-time librdkafka (Confluent's build, scripts/setup) has them, so each is
// looked up when called. Each returns false when the run-time librdkafka lacks it.
#include <stdbool.h>
#include <stdint.h>
#include <librdkafka/rdkafka.h>
#include <librdkafka/rdkafka_mock.h>

/// The host and port broker `broker_id` advertises in Metadata answers (a proxy in front of it);
/// it still listens where it did (rd_kafka_mock_broker_set_host_port, librdkafka 2.5).
bool pushline_mock_advertise(rd_kafka_mock_cluster_t *mcluster, int32_t broker_id, const char *host, int port);

/// The broker's group.consumer.session.timeout.ms for KIP-848 groups (the mock's default: 30 s).
bool pushline_mock_consumer_session_timeout(rd_kafka_mock_cluster_t *mcluster, int milliseconds);

/// The broker's group.consumer.heartbeat.interval.ms for KIP-848 groups (the mock's default: 3 s).
bool pushline_mock_consumer_heartbeat_interval(rd_kafka_mock_cluster_t *mcluster, int milliseconds);

/// The broker Metadata answers name as the controller (the mock's default, 0, is no broker, so an
/// admin request such as CreateTopics waits for a controller until it times out); librdkafka 2.16.
bool pushline_mock_controller(rd_kafka_mock_cluster_t *mcluster, int32_t broker_id);

/// The broker's group.initial.rebalance.delay.ms for classic groups (the mock's default: 3 s).
bool pushline_mock_initial_rebalance_delay(rd_kafka_mock_cluster_t *mcluster, int32_t milliseconds);
#endif
