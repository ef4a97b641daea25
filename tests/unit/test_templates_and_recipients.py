import pytest

from sendledger.domain import templates
from sendledger.domain.errors import InternalTemplate, InvalidRequest, UnknownTemplate
from sendledger.domain.recipients import Channel, parse_recipient, recipient_from_key


def test_html_part_escapes_params_and_subject_is_one_line():
    rendered = templates.render("notice", "1", Channel.EMAIL, {"subject": "hi\r\nBcc: x", "body": "<script>"})
    assert rendered.subject == "hi Bcc: x"
    assert "&lt;script&gt;" in (rendered.html or "") and "<script>" in rendered.text


def test_template_checks():
    templates.check("alert", "1", Channel.SMS, {"summary": "x"})
    with pytest.raises(UnknownTemplate):
        templates.check("../alert", "1", Channel.EMAIL, {"summary": "x"})
    with pytest.raises(InternalTemplate):
        templates.check("password-reset", "1", Channel.EMAIL, {"reset_link": "x"})
    templates.check("password-reset", "1", Channel.EMAIL, {"reset_link": "x"}, internal=True)


def test_recipient_keys_fold_case():
    assert parse_recipient(Channel.EMAIL, "Alice@Example.COM").key == "email:alice@example.com"
    assert recipient_from_key("+12065550123").key == "sms:+12065550123"


@pytest.mark.parametrize("raw", ["a@b.c\n", "a@example.com\r", "no-at-sign"])
def test_bad_emails(raw):
    with pytest.raises(InvalidRequest):
        parse_recipient(Channel.EMAIL, raw)
