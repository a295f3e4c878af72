#ifndef PUSHLINE_CRDKAFKA_SHIM_H
#define PUSHLINE_CRDKAFKA_SHIM_H
// librdkafka, built against Debian's headers; at run time the project uses
// Confluent's current build (scripts/setup links it into lib/).
#include <librdkafka/rdkafka.h>
#endif
