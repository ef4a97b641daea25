"""One thin module per Lambda: parse → call a use case → respond."""
