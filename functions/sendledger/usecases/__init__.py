"""Use cases: parse → decide (domain) → persist (ports) → respond. One module per flow."""
