// APNSMock module: see docs/architecture.md.
