"""The providers that carry messages, one slice each (registry.py lists them).

Each slice holds its sender, its event parser (pure: guarded by tests/unit/test_architecture.py),
its signature check or poll lane, its lookup of a timed-out send and its settings fragment, behind
the one provider port (ports/providers.py). Nothing outside a slice, the registry, settings and
the docs names a provider.
"""
