// NIOOpenSSL module: see docs/architecture.md.
