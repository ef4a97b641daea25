import pytest

from sendledger.domain import templates
from sendledger.domain.callers import CallerId
from sendledger.domain.errors import InternalTemplate, InvalidRequest, UnknownTemplate
from sendledger.domain.recipients import Channel, parse_recipient, recipient_from_key
from sendledger.domain.template_folder import TemplateFolder
from sendledger.usecases.template_catalog import shipped_catalog

SHIPPED_FOLDER = TemplateFolder()


def _shipped(template_id: str):
    found = SHIPPED_FOLDER.get(template_id, "1")
    assert found is not None
    return found


def test_html_part_escapes_params_and_subject_is_one_line():
    notice = _shipped("notice")
    rendered = templates.render(notice, Channel.EMAIL, {"subject": "hi\r\nBcc: x", "body": "<script>"})
    assert rendered.subject == "hi Bcc: x"
    assert "&lt;script&gt;" in (rendered.html or "") and "<script>" in rendered.text


def test_template_checks():
    templates.check(_shipped("alert"), Channel.SMS, {"summary": "x"})
    with pytest.raises(UnknownTemplate):
        shipped_catalog().for_send(CallerId("c"), "../alert", "1")
    reset = _shipped("password-reset")
    params = {"reset_link": "x", "reset_window": "10 minutes"}
    with pytest.raises(InternalTemplate):
        templates.check(reset, Channel.EMAIL, params)
    templates.check(reset, Channel.EMAIL, params, internal=True)


def test_recipient_keys_fold_case():
    assert parse_recipient(Channel.EMAIL, "Alice@Example.COM").key == "email:alice@example.com"
    assert recipient_from_key("+12065550123").key == "sms:+12065550123"


@pytest.mark.parametrize("raw", ["a@b.c\n", "a@example.com\r", "no-at-sign"])
def test_bad_emails(raw):
    with pytest.raises(InvalidRequest):
        parse_recipient(Channel.EMAIL, raw)
