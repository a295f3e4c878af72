// APNS module: see docs/architecture.md.
