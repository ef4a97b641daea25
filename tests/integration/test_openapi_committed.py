from pathlib import Path

from sendledger.handlers.api_routes import openapi_json

DOC = Path(__file__).resolve().parents[2] / "docs" / "openapi.json"


def test_committed_openapi_document_matches_the_code():
    # Regenerate with: make openapi
    assert DOC.read_text() == openapi_json() + "\n"
