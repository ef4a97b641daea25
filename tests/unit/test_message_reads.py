"""GET /v1/messages/{id} as a use case: a caller reads the messages its own requests created."""

from __future__ import annotations

from sendledger.usecases.messages import get_message
from tests.support.fakes import PRINCIPAL, caller_id
from tests.unit.fakes import FakeWorld
from tests.unit.helpers import send

OTHER = "arn:aws:sts::210987654321:assumed-role/test-caller/task-1"  # another account


def test_a_message_is_readable_by_its_owner_only(world: FakeWorld) -> None:
    message_id = send(world.runtime).message.message_id
    mine = get_message(world.runtime.messages, message_id, caller_id(PRINCIPAL))
    assert mine is not None and mine.message_id == message_id
    assert get_message(world.runtime.messages, message_id, caller_id(OTHER)) is None, "as if absent"
    assert get_message(world.runtime.messages, "msg_" + "0" * 26, caller_id(PRINCIPAL)) is None
