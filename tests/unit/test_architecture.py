"""The hexagon holds: the domain and the providers' parsers import no AWS SDK, no persistence and no framework."""

import ast
import subprocess
import sys
from pathlib import Path

from sendledger.domain.provider import Provider

DOMAIN = Path(__file__).resolve().parents[2] / "functions" / "sendledger" / "domain"
PROVIDERS = DOMAIN.parent / "providers"
FORBIDDEN = ("boto3", "botocore", "aws_lambda_powertools", "pydantic")
# In each provider's slice: its event parser, its simulation, and its webhook signature check
# where that is pure; the simulated providers' rules, which every simulation follows.
PURE_IN_SLICES = ("events.py", "simulation.py", "signature.py", "rules.py")


def pure_provider_modules() -> list[str]:
    found = [path for name in PURE_IN_SLICES for path in PROVIDERS.glob(f"*/{name}")]
    return sorted(f"sendledger.providers.{path.parent.name}.{path.stem}" for path in found)


def _loaded_outside_world(modules: list[str]) -> str:
    probe = (
        "import importlib, sys\n"
        f"for name in {modules!r}: importlib.import_module(name)\n"
        f"print(','.join(sorted({{m.split('.')[0] for m in sys.modules}} & set({FORBIDDEN!r}))))\n"
    )
    functions = str(DOMAIN.parents[1])
    result = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True, cwd=functions)
    return result.stdout.strip()


def test_domain_modules_import_nothing_from_the_outside_world():
    modules = sorted(f"sendledger.domain.{path.stem}" for path in DOMAIN.glob("*.py") if path.stem != "__init__")
    assert len(modules) >= 10
    assert _loaded_outside_world(modules) == ""


def test_every_providers_event_parser_is_as_pure_as_the_domain():
    modules = pure_provider_modules()
    parsers = {name.rsplit(".", 2)[1] for name in modules if name.endswith(".events")}
    simulations = {name.rsplit(".", 2)[1] for name in modules if name.endswith(".simulation")}
    slices = {provider.value for provider in Provider}  # the registry's: simulated/ is not a provider
    assert parsers == slices, f"slices without an events.py parser: {sorted(slices - parsers)}"
    assert simulations == slices, f"slices without a simulation.py: {sorted(slices - simulations)}"
    assert _loaded_outside_world(modules) == ""


ROOT = DOMAIN.parents[2]
FAKES = Path(__file__).resolve().parent / "fakes"
SDKS = ("boto3", "botocore", "moto")
USE_CASE_TESTS = sorted(path.stem for path in FAKES.parent.glob("test_*_usecase.py"))


def _imported_names(path: Path) -> set[str]:
    names = set()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            names |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module:
            names.add(node.module)
    return names


# The table's key layout is the one piece of the DynamoDB adapter the fakes share (pure functions,
# no SDK): an item keyed differently in the fakes would hide a key that merges two callers' items.
SHARED_KEYS = "sendledger.adapters.dynamodb.keys"
SHARED_KEYS_LOADS = {"sendledger.adapters", "sendledger.adapters.dynamodb", SHARED_KEYS}


def test_the_fakes_import_no_aws_sdk_no_moto_and_no_adapter():
    modules = sorted(FAKES.glob("*.py"))
    assert len(modules) >= 10
    for path in [*modules, *(FAKES.parent / f"{name}.py" for name in USE_CASE_TESTS), FAKES.parent / "helpers.py"]:
        found = {name for name in _imported_names(path) if name.split(".")[0] in SDKS}
        found |= {name for name in _imported_names(path) if name.startswith("sendledger.adapters")} - {SHARED_KEYS}
        assert not found, f"{path.name} imports {sorted(found)}"


def test_the_fakes_and_the_use_case_tests_load_no_aws_sdk_nor_moto():
    # Not even indirectly; aws_lambda_powertools (the use cases' logger) loads the bare botocore
    # package to probe for it, nothing of botocore beyond that.
    assert len(USE_CASE_TESTS) >= 5
    modules = ["tests.unit.fakes", *(f"tests.unit.{name}" for name in USE_CASE_TESTS)]
    probe = (
        "import importlib, sys\n"
        f"sys.path[:0] = [{str(ROOT / 'functions')!r}, {str(ROOT)!r}]\n"
        f"for name in {modules!r}: importlib.import_module(name)\n"
        "loaded = [m for m in sys.modules if m.split('.')[0] in ('boto3', 'moto') or m.startswith('botocore.')"
        " or m.startswith('sendledger.adapters')]\n"
        "print(','.join(sorted(loaded)))\n"
    )
    result = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True, cwd=ROOT)
    assert set(filter(None, result.stdout.strip().split(","))) <= SHARED_KEYS_LOADS, result.stdout
