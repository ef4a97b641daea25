"""A container that has served its callers before: their template lookups are cached.

The steady state the send budget (2 requests) is stated for, as `warm_caller_settings` is for
the caller settings' read. What the first lookup costs, one GetItem per caller, template version
and TEMPLATE_CACHE_SECONDS (and one for the caller's reset mail), is measured on its own in
tests/integration/test_template_reads.py.
"""

from __future__ import annotations

from typing import Any

from tests.support.fakes import PRINCIPAL, caller_id

SHIPPED = ("alert", "notice")


def warm_templates(api: Any, *principals: str) -> None:
    catalog = api.runtime.catalog
    for principal in principals or (PRINCIPAL,):
        caller = caller_id(principal)
        for template_id in SHIPPED:
            catalog.for_send(caller, template_id, "1")
        catalog.reset_version(caller)


def new_container(runtime: Any) -> None:
    """The same parts with a catalog no send has used (a new container's): replacing a part drops
    the flows built over it, the catalog among them (the caller settings' and watermarks' caches
    are the parts' own, and stay as warm as they were)."""
    runtime.template_store = runtime.template_store
