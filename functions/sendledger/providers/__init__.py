"""The providers that carry messages, one slice each (the domain's registry,
`Provider` in domain/provider.py, lists them; bootstrap/slices.py loads a slice by its name).

Each slice holds its sender, its event parser (pure: guarded by tests/unit/test_architecture.py),
its signature check or poll lane, its lookup of a timed-out send and its settings fragment, behind
the one provider port (ports/providers.py). Nothing outside a slice, the registry, settings and
the docs names a provider; nothing below this package imports it (pyproject.toml's import contract).
"""
