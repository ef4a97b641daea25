"""The console's static files (``local/console/``), served by name from a fixed listing.

Only files that were in the directory when the module loaded can be served, looked up by their
exact name: no request text ever becomes a filesystem path.
"""

from __future__ import annotations

from pathlib import Path
from types import MappingProxyType

CONSOLE_DIR = Path(__file__).resolve().parent / "console"
INDEX = "index.html"
CONTENT_TYPES = MappingProxyType(
    {
        ".html": "text/html; charset=utf-8",
        ".js": "text/javascript; charset=utf-8",
        ".css": "text/css; charset=utf-8",
        ".svg": "image/svg+xml",
        ".png": "image/png",
    }
)
# The mail's HTML is shown in a sandboxed srcdoc frame (which inherits this policy): no script
# runs there, its inline styles render, and its images load as a mail client would load them.
CONTENT_SECURITY_POLICY = (
    "default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; "
    "img-src 'self' data: http: https:; frame-src 'self'; connect-src 'self'; "
    "base-uri 'none'; form-action 'none'; frame-ancestors 'none'"
)
HEADERS = (
    ("Cache-Control", "no-store"),
    ("X-Content-Type-Options", "nosniff"),
    ("Content-Security-Policy", CONTENT_SECURITY_POLICY),
    ("Referrer-Policy", "no-referrer"),
)

_FILES = MappingProxyType(
    {
        path.name: path
        for path in sorted(CONSOLE_DIR.iterdir())
        if path.is_file() and path.suffix in CONTENT_TYPES and not path.name.startswith(".")
    }
    if CONSOLE_DIR.is_dir()
    else {}
)


def console_file(name: str) -> tuple[bytes, str] | None:
    """(content, content type) of the console file called ``name``; None for any other name."""
    path = _FILES.get(name)
    if path is None:
        return None
    return path.read_bytes(), CONTENT_TYPES[path.suffix]
