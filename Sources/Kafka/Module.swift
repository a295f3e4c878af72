// Kafka module: see docs/architecture.md.
