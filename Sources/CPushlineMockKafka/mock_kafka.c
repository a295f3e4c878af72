#define _GNU_SOURCE
#include <dlfcn.h>
#include "pushline_mock_kafka.h"

// Looked up at run time rather than linked: the build links Debian's librdkafka (2.0.2), which
// has none of these, while the process runs Confluent's (2.16), which has them all.
static void *mock_function(const char *name) { return dlsym(RTLD_DEFAULT, name); }

bool pushline_mock_advertise(rd_kafka_mock_cluster_t *mcluster, int32_t broker_id, const char *host, int port) {
    void (*function)(rd_kafka_mock_cluster_t *, int32_t, const char *, int) =
        (void (*)(rd_kafka_mock_cluster_t *, int32_t, const char *, int))mock_function("rd_kafka_mock_broker_set_host_port");
    if (!function) return false;
    function(mcluster, broker_id, host, port);
    return true;
}

static bool set_int(const char *name, rd_kafka_mock_cluster_t *mcluster, int value) {
    void (*function)(rd_kafka_mock_cluster_t *, int) = (void (*)(rd_kafka_mock_cluster_t *, int))mock_function(name);
    if (!function) return false;
    function(mcluster, value);
    return true;
}

bool pushline_mock_consumer_session_timeout(rd_kafka_mock_cluster_t *mcluster, int milliseconds) {
    return set_int("rd_kafka_mock_set_group_consumer_session_timeout_ms", mcluster, milliseconds);
}

bool pushline_mock_consumer_heartbeat_interval(rd_kafka_mock_cluster_t *mcluster, int milliseconds) {
    return set_int("rd_kafka_mock_set_group_consumer_heartbeat_interval_ms", mcluster, milliseconds);
}

bool pushline_mock_controller(rd_kafka_mock_cluster_t *mcluster, int32_t broker_id) {
    // Its result, if any, is not needed: it only sets a field.
    void (*function)(rd_kafka_mock_cluster_t *, int32_t) =
        (void (*)(rd_kafka_mock_cluster_t *, int32_t))mock_function("rd_kafka_mock_set_controller_id");
    if (!function) return false;
    function(mcluster, broker_id);
    return true;
}

bool pushline_mock_initial_rebalance_delay(rd_kafka_mock_cluster_t *mcluster, int32_t milliseconds) {
    void (*function)(rd_kafka_mock_cluster_t *, int32_t) =
        (void (*)(rd_kafka_mock_cluster_t *, int32_t))mock_function("rd_kafka_mock_group_initial_rebalance_delay_ms");
    if (!function) return false;
    function(mcluster, milliseconds);
    return true;
}
