// Pushline module: see docs/architecture.md.
