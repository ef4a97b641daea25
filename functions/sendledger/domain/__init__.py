"""Pure domain: state machines, policies, tokens, fingerprints. No AWS imports here."""
