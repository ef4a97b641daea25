"""The deployment's templates: a folder of `<id>/<version>.json`, read once per container.

The folder is CDK context `templates_dir`, bundled into the functions' asset and checked at
synth with the rules a caller's PUT meets (infra/templates.py), so a broken file fails the
synth instead of a send. Without one, the templates shipped beside the code. Files bundled with
the code, read like the code: no SDK, so the domain may hold the reader.
"""

from __future__ import annotations

import json
from pathlib import Path

from sendledger.domain.template_rules import Problem, parse_version
from sendledger.domain.template_versions import TemplateVersion

SHIPPED = Path(__file__).resolve().parent.parent / "templates"


class TemplateFolder:
    """The deployment's versions, each parsed on its first use and kept."""

    def __init__(self, root: Path | str | None = None) -> None:
        self.root = Path(root) if root else SHIPPED
        self._loaded: dict[tuple[str, str], TemplateVersion | None] = {}

    def get(self, template_id: str, version: str) -> TemplateVersion | None:
        key = (template_id, version)
        if key not in self._loaded:
            self._loaded[key] = self._read(template_id, version)
        return self._loaded[key]

    def all(self) -> list[TemplateVersion]:
        found = [self.get(path.parent.name, path.stem) for path in sorted(self.root.glob("*/*.json"))]
        return [version for version in found if version is not None]

    def _read(self, template_id: str, version: str) -> TemplateVersion | None:
        path = self.root / template_id / f"{version}.json"
        # The id and version never climb out of the folder: parse_version checks their pattern.
        if "/" in template_id or "/" in version or template_id.startswith(".") or not path.is_file():
            return None
        parsed = parse_version(template_id, version, json.loads(path.read_text(encoding="utf-8")), deployment=True)
        if parsed.version is None:  # checked at synth; a file edited since is refused, not half-read
            raise ValueError(f"deployment template {path} is invalid: {[p.as_json() for p in parsed.problems]}")
        return parsed.version


def check_folder(root: Path) -> list[str]:
    """Every problem of every file in the folder, as `<id>/<version>.json: field: message` lines."""
    lines: list[str] = []
    paths = sorted(root.glob("*/*.json"))
    if not paths:
        return [f"{root}: no <id>/<version>.json template in it"]
    for path in paths:
        name = f"{path.parent.name}/{path.name}"
        try:
            body = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
            lines.append(f"{name}: not JSON ({exc})")
            continue
        if not isinstance(body, dict):
            lines.append(f"{name}: must be a JSON object")
            continue
        problems: tuple[Problem, ...] = parse_version(path.parent.name, path.stem, body, deployment=True).problems
        lines += [f"{name}: {problem.field}: {problem.message}" for problem in problems]
    return lines
