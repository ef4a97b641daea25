"""The rules a template version is checked against: a caller's PUT body and the deployment's
files (at synth and at load) alike. Every problem is named at once, so one answer lists
everything to fix; a body without any is a TemplateVersion (domain/template_versions.py).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from string import Template as StringTemplate
from typing import Any

from sendledger.domain.recipients import Channel
from sendledger.domain.template_versions import (
    RESET_LINK_PARAM,
    RESET_TEMPLATE_ID,
    TemplateVersion,
    Variant,
    normal_tag,
)
from sendledger.domain.values import value

ID_PATTERN = r"^[A-Za-z0-9_.-]{1,64}$"  # ids and versions: today's pattern (names, files, keys)
SAFE_PART = re.compile(ID_PATTERN)
LOCALE_PATTERN = re.compile(r"^[a-z]{2,3}(-[A-Za-z0-9]{2,8})*$")
PARAM_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]{0,63}$")
MAX_SUBJECT = 998  # RFC 5322's line limit
MAX_BODY_BYTES = 100 * 1024  # text and html, each
MAX_SMS_CHARACTERS = 1600  # ten concatenated GSM-7 segments and some: what carriers accept
MAX_LOCALES = 20
MAX_PARAMS = 50
# Below DynamoDB's 400 KB item: a version is one item, words and metadata.
MAX_CANONICAL_BYTES = 350 * 1024
# HTML elements that never close: <br>, <img> ...
VOID_ELEMENTS = frozenset(
    {"area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "source", "track", "wbr"}
)


@value
class Problem:
    field: str
    message: str

    def as_json(self) -> dict[str, str]:
        return {"field": self.field, "message": self.message}


@value
class Parsed:
    version: TemplateVersion | None  # None when there are problems
    problems: tuple[Problem, ...] = ()


KNOWN_FIELDS = frozenset({"params", "email", "sms", "locales", "tracking", "internal"})
VARIANT_FIELDS = {Channel.EMAIL: frozenset({"subject", "text", "html"}), Channel.SMS: frozenset({"text"})}


def parse_version(template_id: str, version: str, body: Mapping[str, Any], *, deployment: bool = False) -> Parsed:
    """A version from a PUT body (or a deployment's file): every problem named, or the version.

    `internal` is the deployment's word only; a caller's `password-reset` is internal by its id,
    and its tracking is forced off (click tracking would carry the reset link through a redirect).
    """
    problems: list[Problem] = []
    if not SAFE_PART.match(template_id):
        problems.append(Problem("id", f"must match {ID_PATTERN}"))
    if not SAFE_PART.match(version):
        problems.append(Problem("version", f"must match {ID_PATTERN}"))
    allowed = KNOWN_FIELDS if deployment else KNOWN_FIELDS - {"internal"}
    problems += [Problem(name, "unknown field") for name in sorted(set(body) - allowed)]
    params = _params(body.get("params"), problems)
    variants = _variants(body, "", problems)
    if not variants:
        problems.append(Problem("email", "a template needs an email or an sms variant"))
    locales: dict[str, dict[Channel, Variant]] = {}
    raw_locales = body.get("locales", {})
    if not isinstance(raw_locales, Mapping):
        problems.append(Problem("locales", "must be an object of locale tag to variants"))
        raw_locales = {}
    if len(raw_locales) > MAX_LOCALES:
        problems.append(Problem("locales", f"at most {MAX_LOCALES} locales"))
    for tag, raw in raw_locales.items():
        where = f"locales.{tag}"
        if not isinstance(tag, str) or not LOCALE_PATTERN.match(tag):
            problems.append(Problem(where, "not a BCP 47 language tag (e.g. fr, pt-BR)"))
            continue
        if not isinstance(raw, Mapping):
            problems.append(Problem(where, "must be an object with email and/or sms"))
            continue
        problems += [Problem(f"{where}.{name}", "unknown field") for name in sorted(set(raw) - {"email", "sms"})]
        localized = _variants(raw, f"{where}.", problems)
        problems += [
            Problem(f"{where}.{channel.value}", "the default has no such variant")
            for channel in localized
            if channel not in variants
        ]
        locales[normal_tag(tag)] = localized
    tracking = body.get("tracking", True)
    if not isinstance(tracking, bool):
        problems.append(Problem("tracking", "must be true or false"))
        tracking = True
    internal = bool(body.get("internal", False)) or template_id == RESET_TEMPLATE_ID
    if template_id == RESET_TEMPLATE_ID:
        tracking = False
        if RESET_LINK_PARAM not in params:
            problems.append(Problem("params", f"a {RESET_TEMPLATE_ID} template must declare {RESET_LINK_PARAM}"))
        if Channel.EMAIL not in variants:
            problems.append(Problem("email", f"a {RESET_TEMPLATE_ID} template is an email"))
    problems += _placeholders(params, variants, locales)
    parsed = TemplateVersion(
        id=template_id,
        version=version,
        params=tuple(params),
        variants=variants,
        locales=locales,
        tracking=tracking,
        internal=internal,
    )
    if not problems and len(parsed.canonical()) > MAX_CANONICAL_BYTES:
        problems.append(Problem("body", f"the version is larger than {MAX_CANONICAL_BYTES // 1024} KB"))
    return Parsed(None, tuple(problems)) if problems else Parsed(parsed)


def _params(raw: Any, problems: list[Problem]) -> list[str]:
    if raw is None:
        return []
    if not isinstance(raw, list) or not all(isinstance(name, str) for name in raw):
        problems.append(Problem("params", "must be a list of names"))
        return []
    if len(raw) > MAX_PARAMS:
        problems.append(Problem("params", f"at most {MAX_PARAMS} params"))
    problems += [Problem("params", f"{name!r} is not a param name") for name in raw if not PARAM_NAME.match(name)]
    problems += [Problem("params", f"{name!r} is declared twice") for name in sorted(set(raw)) if raw.count(name) > 1]
    return list(dict.fromkeys(raw))


def _variants(raw: Mapping[str, Any], where: str, problems: list[Problem]) -> dict[Channel, Variant]:
    found: dict[Channel, Variant] = {}
    for channel in Channel:
        part = raw.get(channel.value)
        if part is None:
            continue
        field = f"{where}{channel.value}"
        if not isinstance(part, Mapping):
            problems.append(Problem(field, "must be an object"))
            continue
        problems += [
            Problem(f"{field}.{name}", "unknown field") for name in sorted(set(part) - VARIANT_FIELDS[channel])
        ]
        texts = {name: text for name, text in part.items() if name in VARIANT_FIELDS[channel]}
        bad = [name for name, text in texts.items() if not isinstance(text, str)]
        problems += [Problem(f"{field}.{name}", "must be a string") for name in bad]
        if bad:
            continue
        if not texts.get("text"):
            problems.append(Problem(f"{field}.text", "required"))
            continue
        if channel is Channel.EMAIL:
            problems += _email_problems(field, texts)
        elif len(texts["text"]) > MAX_SMS_CHARACTERS:
            problems.append(Problem(f"{field}.text", f"longer than {MAX_SMS_CHARACTERS} characters"))
        found[channel] = Variant(text=texts["text"], subject=texts.get("subject"), html=texts.get("html"))
    return found


def _email_problems(field: str, texts: Mapping[str, str]) -> list[Problem]:
    problems: list[Problem] = []
    subject = texts.get("subject")
    if not subject:
        problems.append(Problem(f"{field}.subject", "required"))
    elif "\r" in subject or "\n" in subject:
        problems.append(Problem(f"{field}.subject", "must be one line"))
    elif len(subject) > MAX_SUBJECT:
        problems.append(Problem(f"{field}.subject", f"longer than {MAX_SUBJECT} characters"))
    for name in ("text", "html"):
        part = texts.get(name)
        if part is not None and len(part.encode()) > MAX_BODY_BYTES:
            problems.append(Problem(f"{field}.{name}", f"larger than {MAX_BODY_BYTES // 1024} KB"))
    html = texts.get("html")
    if html is not None:
        unbalanced = unbalanced_html(html)
        if unbalanced:
            problems.append(Problem(f"{field}.html", unbalanced))
    return problems


def _placeholders(
    params: list[str], variants: Mapping[Channel, Variant], locales: Mapping[str, Mapping[Channel, Variant]]
) -> list[Problem]:
    """Each text's placeholders must be declared, and each declared param used somewhere."""
    problems: list[Problem] = []
    declared, used = set(params), set[str]()
    places = [("", variants), *((f"locales.{tag}.", localized) for tag, localized in locales.items())]
    for where, group in places:
        for channel, variant in group.items():
            for name, text in (("subject", variant.subject), ("text", variant.text), ("html", variant.html)):
                if text is None:
                    continue
                field = f"{where}{channel.value}.{name}"
                names, malformed = placeholders(text)
                if malformed:
                    problems.append(Problem(field, "a $ that starts no ${name} placeholder (write $$ for a $)"))
                used |= names
                problems += [Problem(field, f"${{{n}}} is not a declared param") for n in sorted(names - declared)]
    problems += [Problem("params", f"{name!r} is declared but used nowhere") for name in params if name not in used]
    return problems


def placeholders(text: str) -> tuple[set[str], bool]:
    """The ${name} (or $name) placeholders of a text, and whether a stray $ is there."""
    names: set[str] = set()
    malformed = False
    for match in StringTemplate.pattern.finditer(text):
        named = match.group("named") or match.group("braced")
        if named:
            names.add(named)
        elif match.group("invalid") is not None:
            malformed = True
    return names, malformed


def unbalanced_html(html: str) -> str | None:
    """Why the HTML's elements do not nest (None: they do). Void elements need no end tag."""
    # Imported here: only a publish checks HTML, never a send's cold start.
    from html.parser import HTMLParser

    class Balance(HTMLParser):
        def __init__(self) -> None:
            super().__init__(convert_charrefs=True)
            self.open: list[str] = []
            self.problem: str | None = None

        def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
            if tag not in VOID_ELEMENTS:
                self.open.append(tag)

        def handle_endtag(self, tag: str) -> None:
            if tag in VOID_ELEMENTS or self.problem:
                return
            if not self.open or self.open[-1] != tag:
                expected = f"</{self.open[-1]}>" if self.open else "no closing tag"
                self.problem = f"unbalanced HTML: </{tag}> where {expected} was due"
                return
            self.open.pop()

    parser = Balance()
    parser.feed(html)
    parser.close()
    if parser.problem:
        return parser.problem
    if parser.open:
        return f"unbalanced HTML: <{parser.open[-1]}> is never closed"
    return None
