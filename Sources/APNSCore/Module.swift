// APNSCore module: see docs/architecture.md.
