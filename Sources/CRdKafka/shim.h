#ifndef PUSHLINE_CRDKAFKA_SHIM_H
#define PUSHLINE_CRDKAFKA_SHIM_H
// librdkafka, built against Debian's headers; at run time the project uses
// Confluent's current build (scripts/setup links it into lib/).
#include <librdkafka/rdkafka.h>
// The in-process mock cluster (`test.mock.num.brokers`), for tests.
#include <librdkafka/rdkafka_mock.h>

/// rd_kafka_mock_broker_push_request_error_rtts for one request (Swift cannot call C variadics):
/// the next `api_key` request to `broker_id` is answered with `err` after `rtt_ms`.
static inline rd_kafka_resp_err_t pushline_mock_push_request_error_rtt(
    rd_kafka_mock_cluster_t *mcluster, int32_t broker_id, int16_t api_key,
    rd_kafka_resp_err_t err, int rtt_ms) {
    return rd_kafka_mock_broker_push_request_error_rtts(mcluster, broker_id, api_key, 1, err, rtt_ms);
}
#endif
