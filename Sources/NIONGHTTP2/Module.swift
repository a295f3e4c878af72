// NIONGHTTP2 module: see docs/architecture.md.
