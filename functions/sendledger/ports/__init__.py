"""Ports: what the use cases need from the outside world, one module per aggregate or concern.
Adapters implement them; the in-memory fakes in tests/unit/fakes do too."""
