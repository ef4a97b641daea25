"""Test support: fakes at the edges (clock, lambda context), real code in the middle."""
