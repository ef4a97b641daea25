"""One thin module per Lambda: parse → call a use case → respond."""

from sendledger.handlers import startup

startup.hold()  # before any handler module's imports: see startup.py
