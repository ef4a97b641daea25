"""Lambda code asset for functions/, bundled with pip on the host (no Docker).

The asset is `functions/sendledger` plus the pip-installed runtime dependencies for the Lambda
platform (arm64, the runtime's CPython). boto3/botocore and their dependencies are removed:
the Lambda runtime provides them, and shipping a second copy only slows cold starts.

Bytecode is compiled here when an interpreter of the runtime's Python version is at hand (this
one, or `python3.14` on PATH): Lambda's code directory is read-only, so a module shipped without
its .pyc is compiled again by every new container (the api's modules take 320-390 ms of its
cold start on the bench machine; benchmarks/README.md). Without one, the asset ships sources and
synthesis says so.

pip runs once per (requirements, platform, Python version): the installed tree is cached under
build/lambda-deps/<key>/ and hard-linked (or copied) into each bundle. CDK itself skips
bundling when cdk.out/ already holds the asset for the same hash.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import aws_cdk as cdk
import jsii
from aws_cdk import aws_lambda as lambda_

from infra import FUNCTIONS_DIR, ROOT
from infra.templates import ASSET_FOLDER

PLATFORM = "manylinux2014_aarch64"
PACKAGE = "sendledger"
REQUIREMENTS = ROOT / "requirements.txt"
CACHE_ROOT = ROOT / "build" / "lambda-deps"
# Bump when the bundling procedure changes in a way that changes its output.
BUNDLER_VERSION = "3"
# Never imported (phonenumbers' geocoder, carrier and time zone data, most of its 48 MB): their
# bytecode would only grow the asset.
NOT_COMPILED = r"phonenumbers/(geodata|carrierdata|tzdata)/"
# Where Lambda unpacks the asset (LAMBDA_TASK_ROOT): the file names the bytecode records.
TASK_ROOT = "/var/task"
# Provided by the Lambda Python runtime (boto3 and its dependency closure).
RUNTIME_PROVIDED = frozenset(("boto3", "botocore", "s3transfer", "jmespath", "urllib3", "python-dateutil", "six"))
_SOURCE_IGNORE = shutil.ignore_patterns("__pycache__", "*.pyc", "*.pyo", ".*")
_EXCLUDE = ["__pycache__", "*.pyc", "*.pyo", ".*", "*.egg-info"]


def _dist_name(requirement_line: str) -> str:
    name = requirement_line.split(";", maxsplit=1)[0]
    for sep in ("[", "=", "<", ">", "!", "~", " "):
        name = name.split(sep)[0]
    return name.strip().lower().replace("_", "-")


def filtered_requirements(text: str) -> str:
    """requirements.txt minus comments and the runtime-provided distributions."""
    kept = []
    for raw in text.splitlines():
        line = raw.split("#", 1)[0].strip()
        if line and _dist_name(line) not in RUNTIME_PROVIDED:
            kept.append(line)
    return "\n".join(kept) + "\n"


def folder_digest(folder: Path | None) -> list[str]:
    """The deployer's template files, as hash inputs: a changed file is a new asset."""
    if folder is None:
        return []
    return [
        f"{path.relative_to(folder).as_posix()}:{hashlib.sha256(path.read_bytes()).hexdigest()}"
        for path in sorted(folder.rglob("*.json"))
    ]


def source_hash(*extra: str) -> str:
    """Hash of everything under functions/sendledger (bundled files only) plus `extra`."""
    digest = hashlib.sha256()
    base = FUNCTIONS_DIR / PACKAGE
    for path in sorted(base.rglob("*")):
        rel = path.relative_to(FUNCTIONS_DIR)
        if path.is_dir() or any(p.startswith(".") or p == "__pycache__" for p in rel.parts):
            continue
        if path.suffix in (".pyc", ".pyo"):
            continue
        digest.update(str(rel.as_posix()).encode())
        digest.update(b"\0")
        digest.update(path.read_bytes())
        digest.update(b"\0")
    for item in extra:
        digest.update(item.encode())
        digest.update(b"\0")
    return digest.hexdigest()


def _link_or_copy(src: str, dst: str) -> object:
    try:
        os.link(src, dst)
    except OSError:
        shutil.copy2(src, dst)
    return dst


def bytecode_interpreter(python_version: str) -> str | None:
    """An interpreter of the runtime's Python version ("3.14"): this one, or `python<version>` on PATH."""
    if f"{sys.version_info.major}.{sys.version_info.minor}" == python_version:
        return sys.executable
    found = shutil.which(f"python{python_version}")
    if found is None:
        return None
    asked = [found, "-c", "import sys; print(f'{sys.version_info.major}.{sys.version_info.minor}')"]
    answer = subprocess.run(asked, check=False, capture_output=True, text=True)  # noqa: S603
    return found if answer.returncode == 0 and answer.stdout.strip() == python_version else None


def compile_bytecode(tree: Path, interpreter: str, deployed_at: str = TASK_ROOT) -> None:
    """Every module's .pyc beside it, checked by nothing: the zip keeps no source timestamps a
    timestamp-checked .pyc could be matched with, so CPython would compile the module again. The
    file names it records are where the modules are deployed (`deployed_at`), not this machine's."""
    cmd = [
        interpreter, "-m", "compileall", "-q", "-j", "0", "--invalidation-mode", "unchecked-hash",
        "-x", NOT_COMPILED, "-s", str(tree), "-p", deployed_at, str(tree),
    ]  # fmt: skip
    result = subprocess.run(cmd, check=False, capture_output=True, text=True)  # noqa: S603
    if result.returncode != 0:
        raise RuntimeError(f"compiling the Lambda asset's bytecode failed ({' '.join(cmd)}):\n{result.stdout}")


def _prune_runtime_provided(target: Path) -> None:
    """Delete every file of the runtime-provided distributions (pulled in transitively)."""
    for dist_info in target.glob("*.dist-info"):
        name = dist_info.name.removesuffix(".dist-info").rsplit("-", 1)[0]
        name = name.lower().replace("_", "-")
        if name not in RUNTIME_PROVIDED:
            continue
        record = dist_info / "RECORD"
        if record.exists():
            for line in record.read_text().splitlines():
                rel = line.split(",", 1)[0]
                path = (target / rel).resolve()
                if path.is_relative_to(target.resolve()) and path.is_file():
                    path.unlink()
        shutil.rmtree(dist_info, ignore_errors=True)
    shutil.rmtree(target / "bin", ignore_errors=True)
    # Remove directories left empty by the pruning (deepest first).
    for path in sorted(target.rglob("*"), key=lambda p: len(p.parts), reverse=True):
        if path.is_dir() and not any(path.iterdir()):
            path.rmdir()


@jsii.implements(cdk.ILocalBundling)
class PipLocalBundling:
    """Bundles on the host: cached `pip install --platform ...` + a copy of the package."""

    def __init__(self, python_version: str, templates: Path | None = None) -> None:
        self.python_version = python_version
        self.templates = templates
        self.interpreter = bytecode_interpreter(python_version)

    @property
    def form(self) -> str:
        """What the asset ships: "bytecode" (and sources) or "sources" alone (part of its hash)."""
        return "bytecode" if self.interpreter else "sources"

    def dependencies_dir(self) -> Path:
        """The cached dependency tree, installed with pip on first use."""
        requirements = filtered_requirements(REQUIREMENTS.read_text())
        key = hashlib.sha256(
            "\0".join((BUNDLER_VERSION, PLATFORM, self.python_version, self.form, requirements)).encode()
        ).hexdigest()[:20]
        cached = CACHE_ROOT / f"py{self.python_version}-{key}"
        if (cached / ".complete").exists():
            return cached
        staging = CACHE_ROOT / f".staging-{key}-{os.getpid()}"
        shutil.rmtree(staging, ignore_errors=True)
        staging.mkdir(parents=True)
        req_file = staging / "requirements.lambda.txt"
        req_file.write_text(requirements)
        target = staging / "site"
        cmd = [
            sys.executable, "-m", "pip", "install", "--quiet", "--disable-pip-version-check",
            "--no-compile", "--platform", PLATFORM, "--only-binary=:all:",
            "--implementation", "cp", "--python-version", self.python_version,
            "--target", str(target), "-r", str(req_file),
        ]  # fmt: skip
        print(f"sendledger: installing Lambda dependencies into {cached}", file=sys.stderr)
        result = subprocess.run(cmd, check=False, capture_output=True, text=True)  # noqa: S603
        if result.returncode != 0:
            shutil.rmtree(staging, ignore_errors=True)
            raise RuntimeError(f"pip failed bundling Lambda dependencies ({' '.join(cmd)}):\n{result.stderr}")
        _prune_runtime_provided(target)
        if self.interpreter:
            compile_bytecode(target, self.interpreter)
        (target / ".complete").write_text(requirements)
        shutil.rmtree(cached, ignore_errors=True)
        target.rename(cached)  # atomic publish: a half-built tree is never used
        shutil.rmtree(staging, ignore_errors=True)
        return cached

    def try_bundle(self, output_dir: str, *, image: cdk.DockerImage, **_: Any) -> bool:
        self._bundle(Path(output_dir))
        return True

    def _bundle(self, out: Path) -> None:
        shutil.copytree(
            self.dependencies_dir(),
            out,
            dirs_exist_ok=True,
            copy_function=_link_or_copy,
            ignore=shutil.ignore_patterns(".complete"),
        )
        shutil.copytree(FUNCTIONS_DIR / PACKAGE, out / PACKAGE, ignore=_SOURCE_IGNORE)
        if self.interpreter:
            compile_bytecode(out / PACKAGE, self.interpreter, f"{TASK_ROOT}/{PACKAGE}")
        if self.templates is not None:  # the deployer's folder (TEMPLATES_DIR names it)
            shutil.copytree(self.templates, out / ASSET_FOLDER, ignore=_SOURCE_IGNORE)


def lambda_code(runtime: lambda_.Runtime, *, bundle: bool, templates: Path | None = None) -> lambda_.Code:
    """One code asset for all three Lambdas (handlers differ, code root is functions/);
    `templates`: the deployer's folder, bundled as ASSET_FOLDER (None: the shipped ones)."""
    if not bundle:
        # Template tests: the bare source, no pip. Never deploy this (dependencies missing).
        return lambda_.Code.from_asset(str(FUNCTIONS_DIR), exclude=_EXCLUDE)
    python_version = runtime.name.removeprefix("python")
    bundler = PipLocalBundling(python_version, templates)
    if bundler.interpreter is None:
        print(
            f"sendledger: no Python {python_version} interpreter here (python{python_version} on PATH): the Lambda "
            "asset ships sources, and every cold start compiles them (docs/operations.md#bytecode)",
            file=sys.stderr,
        )
    requirements = filtered_requirements(REQUIREMENTS.read_text())
    asset_hash = source_hash(
        BUNDLER_VERSION, PLATFORM, python_version, bundler.form, requirements, *folder_digest(templates)
    )
    return lambda_.Code.from_asset(
        str(FUNCTIONS_DIR),
        asset_hash=asset_hash,
        asset_hash_type=cdk.AssetHashType.CUSTOM,
        exclude=_EXCLUDE,
        bundling=cdk.BundlingOptions(
            # Only used if local bundling were declined; it never is (errors are raised).
            image=runtime.bundling_image,
            local=bundler,
        ),
    )
