"""The deployment's templates: CDK context `templates_dir`, checked at synth, bundled with the code.

A folder of `<id>/<version>.json` (default: the shipped functions/sendledger/templates/). Every
file meets the rules a caller's PUT meets, and the reset flow's `password-reset` must be there:
a broken folder refuses the synth (like the SLO check), never a send in production.
"""

from __future__ import annotations

from pathlib import Path

from infra import ROOT
from sendledger.domain.template_folder import SHIPPED, TemplateFolder, check_folder
from sendledger.domain.template_versions import RESET_TEMPLATE_ID

# Where a deployer's folder lands in the asset, and what TEMPLATES_DIR then says (Lambda's code root).
ASSET_FOLDER = "deployment_templates"
LAMBDA_TASK_ROOT = "/var/task"


def folder_of(templates_dir: str) -> Path:
    """The folder context names (relative to the project), or the shipped one."""
    if not templates_dir:
        return SHIPPED
    path = Path(templates_dir)
    return path if path.is_absolute() else ROOT / path


def problems(templates_dir: str) -> list[str]:
    folder = folder_of(templates_dir)
    if not folder.is_dir():
        return [f"templates_dir {templates_dir!r} is not a folder"]
    found = [f"templates_dir: {line}" for line in check_folder(folder)]
    if not found and not any(version.id == RESET_TEMPLATE_ID for version in TemplateFolder(folder).all()):
        found.append(f"templates_dir: no {RESET_TEMPLATE_ID}/<version>.json (the reset flow's mail)")
    return found


def is_custom(templates_dir: str) -> bool:
    return folder_of(templates_dir).resolve() != SHIPPED.resolve()


def environment(templates_dir: str) -> dict[str, str]:
    """TEMPLATES_DIR for the Lambdas: the bundled folder, or nothing (the shipped one)."""
    from sendledger import names

    return {names.ENV_TEMPLATES_DIR: f"{LAMBDA_TASK_ROOT}/{ASSET_FOLDER}"} if is_custom(templates_dir) else {}
