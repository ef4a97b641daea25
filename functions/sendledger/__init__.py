"""sendledger: at-most-once transactional email and SMS with an evidence trail."""
