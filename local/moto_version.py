"""The moto release the local patches were written against: each refuses to load on another.

moto_journal and moto_sqs replace moto functions with edited copies of moto's own code, and
moto_serial wraps moto's request stubber: on another moto release they could silently undo a fix
moto made, or patch code that has moved. Check the patches against the new release (read its
changes to the patched functions), then add it here.
"""

from __future__ import annotations

from importlib import metadata

WRITTEN_FOR = ("5.2.5",)  # the moto releases the patches were checked against; requirements-dev.txt pins one


class UnsupportedMoto(ImportError):
    """moto's installed release is not one the patch was written for."""


def require_supported_moto(patch: str) -> None:
    installed = metadata.version("moto")
    if installed not in WRITTEN_FOR:
        raise UnsupportedMoto(
            f"{patch} patches moto's internals as of moto {', '.join(WRITTEN_FOR)}, but moto {installed} is "
            f"installed: install the pinned release (pip install -r requirements-dev.txt), or check the "
            f"patch against moto {installed} and add it to WRITTEN_FOR in local/moto_version.py"
        )
