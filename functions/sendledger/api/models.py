"""Typed request bodies. Unknown fields are rejected (extra="forbid")."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import AfterValidator, BaseModel, ConfigDict, Field

from sendledger.api import send_body as limits


class Model(BaseModel):
    """Validators are built on first use (a request of the route, or the OpenAPI document), not
    at import: a cold start builds only the models of the route it serves."""

    model_config = ConfigDict(defer_build=True)


class Strict(Model):
    model_config = ConfigDict(extra="forbid", str_strip_whitespace=False)


# A BCP 47 tag as a send asks for it: pt-BR falls back to pt, then to the template's default.
LOCALE = Field(
    default=None,
    min_length=limits.LOCALE_LENGTH[0],
    max_length=limits.LOCALE_LENGTH[1],
    pattern=limits.LOCALE_PATTERN,
    description="the words' language (BCP 47); pt-BR falls back to pt, then to the template's default",
)


class TemplateRef(Strict):
    id: str = Field(min_length=1, max_length=limits.MAX_ID, pattern=limits.ID_PATTERN)
    version: str = Field(min_length=1, max_length=limits.MAX_ID, pattern=limits.ID_PATTERN)
    locale: str | None = LOCALE


class Fallback(Strict):
    channel: Literal["email", "sms"]
    to: str = Field(min_length=1, max_length=limits.MAX_ADDRESS)


class Escalation(Strict):
    deadline_seconds: int | None = Field(
        default=None,
        ge=limits.DEADLINE_SECONDS[0],
        le=limits.DEADLINE_SECONDS[1],
        description="required for an email; an SMS without one takes its destination country's "
        "(SMS_COUNTRY_TIMING, docs/sms-guardrails.md)",
    )
    fallback: list[Fallback] = Field(min_length=limits.FALLBACKS[0], max_length=limits.FALLBACKS[1])


def _encodable(params: dict[str, str]) -> dict[str, str]:
    for key, value in params.items():
        try:
            (key + value).encode("utf-8")
        except UnicodeEncodeError:  # its text quotes the offending character: not for the answer
            raise ValueError("keys and values must be valid UTF-8 (no lone surrogates)") from None
    return params


# The caller's pick of a provider for one message (conformance legs, canaries).
ProviderPick = Annotated[
    str | None,
    Field(
        min_length=1,
        max_length=limits.MAX_PROVIDER,
        pattern=limits.PROVIDER_PATTERN,
        description="one of this deployment's enabled providers for the channel, instead of its own choice "
        "(conformance legs, canaries); the message keeps it for every attempt",
    ),
]


# The send's documented schema; the route checks bodies by hand against the same limits
# (send_body.py), and a test holds the two to the same answers.
class SendMessageRequest(Strict):
    channel: Literal["email", "sms"]
    to: str = Field(min_length=1, max_length=limits.MAX_ADDRESS)
    template: TemplateRef
    params: Annotated[dict[str, str], AfterValidator(_encodable)] = Field(
        default_factory=dict, max_length=limits.MAX_PARAMS
    )
    category: Literal["transactional", "alert", "security"] = "transactional"
    event_id: str | None = Field(default=None, min_length=1, max_length=limits.MAX_EVENT_ID)
    escalation: Escalation | None = None
    provider: ProviderPick = None


class PasswordResetRequest(Strict):
    account_id: str = Field(min_length=1, max_length=128, pattern=r"^[\x21-\x7e]+$")
    email: str = Field(min_length=3, max_length=320)
    provider: ProviderPick = None
    locale: str | None = LOCALE


class ConsumeResetRequest(Strict):
    account_id: str = Field(min_length=1, max_length=128, pattern=r"^[\x21-\x7e]+$")
    token: str = Field(min_length=1, max_length=512)


class SuppressRequest(Strict):
    reason: str = Field(min_length=1, max_length=500)


# --- responses (documented in the OpenAPI document) -----------------------------------------
class TemplateView(Model):
    id: str
    version: str
    locale: str | None = Field(default=None, description="the locale its words are in (absent: the default)")
    owner: Literal["caller", "deployment"] | None = Field(
        default=None, description="caller: the caller's own version; absent: the deployment's"
    )


class SmsSegmentsView(Model):
    encoding: Literal["GSM-7", "UCS-2"] = Field(description="GSM-7 (with its extension table) or UCS-2")
    segments: int = Field(description="the segments a carrier bills (concatenation headers included)")


class MessageView(Model):
    message_id: str
    state: str = Field(description="received, sending, accepted, delivered, bounced, complained, failed, unknown, ...")
    channel: Literal["email", "sms"]
    to: str
    template: TemplateView
    category: str
    provider: str = Field(description="the provider that carries it, by its registry name (docs/providers.md)")
    provider_message_id: str | None
    reason: str | None
    created_at: str
    updated_at: str
    retry_after_seconds: int | None = Field(default=None, description="set for pending and unknown")
    test: bool | None = Field(
        default=None, description="true for a test caller's message (simulated outcomes, no provider); absent otherwise"
    )
    sms: SmsSegmentsView | None = Field(default=None, description="an SMS's encoding and billed segments")
    history: list[dict[str, object]] | None = Field(default=None, description="append-only evidence, oldest first")


class ResetAccepted(Model):
    reset_id: str
    state: Literal["requested"]
    expires_at: str


class ResetConsumed(Model):
    reset_id: str
    account_id: str


class SuppressionView(Model):
    """A caller's view: no actor, no free-text admin reason, no other caller's event ids."""

    recipient: str
    suppressed: bool
    reason_class: str | None = Field(description="bounce, complaint, admin, ... (null: never suppressed)")
    since: str | None
    version: int
    history: list[dict[str, object]] = Field(
        description="only the entries this caller's own messages caused: at, type, source, event_id, event_at, "
        "reason, message_id"
    )


class AdminSuppressionView(Model):
    """The admin's view: everything, the acts' actors and reasons included."""

    recipient: str
    suppressed: bool
    reason_class: str | None
    reason: str | None = Field(description="as written: an event's reason, or the admin's free text")
    since: str | None
    version: int
    history: list[dict[str, object]] = Field(description="every entry, oldest first, with its actor and evidence")


class TokenVersionView(Model):
    version: int
    minted_at: str
    invalidated_at: str | None
    invalidated_because: str | None


class ResetEvidenceView(Model):
    """A reset's evidence: never a token nor a token hash."""

    reset_id: str
    account_id: str
    state: Literal["active", "consumed", "expired", "replaced", "locked"]
    created_at: str
    expires_at: str
    replaces: str | None = Field(description="the reset this one replaced (a request with a different email)")
    replaced_by: str | None
    token_versions: list[TokenVersionView]
    messages: list[MessageView] = Field(description="every message sent under the reset, with its history")


class WebhookReceipt(Model):
    """200 (some providers count only exactly 200 as delivered): what became of a signed POST."""

    received: int = Field(description="events in the signed POST")
    queued: int = Field(description="delivery events queued for ingestion (engagement events are skipped)")
    duplicate: bool = Field(False, description="the same signed POST was queued before (a provider's retry)")


class FieldProblem(Model):
    field: str
    message: str


class Problem(Model):
    """RFC 9457 problem details."""

    type: str
    title: str
    status: int
    detail: str
    errors: list[FieldProblem] | None = None
