"""HTTP edge: request/response models and RFC 9457 problem documents."""
