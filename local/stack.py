"""The embedded local stack: moto server + resources + simulator + gateway + scheduler."""

from __future__ import annotations

import importlib
import json
import logging
import os
import shlex
import sys
import threading
import time
from collections.abc import Callable, Mapping, MutableMapping
from datetime import UTC, datetime
from typing import Any

from local.auth import AuthMode, LocalAuth, banner_lines
from local.callers import (
    ENV_LOCAL_CALLER_SETTINGS,
    apply_caller_settings,
    callback_settings,
    local_callers,
    register_callbacks,
)
from local.constants import (
    ACCOUNT_ID,
    ADMIN_CREDENTIAL,
    API_FUNCTION,
    DEFAULT_LOCAL_CREDENTIALS,
    ENV_LOCAL_CREDENTIALS,
    LOCAL_PRINCIPAL,
    POLLER_FUNCTION,
    PUBLISHER_FUNCTION,
    REGION,
    SMS_DELIVERY_LOGS_FUNCTION,
)
from local.cycle_log import cycle_line, resolution_lines
from local.gateway import Gateway
from local.inspection import LedgerInspector
from local.lambda_context import context_factory
from local.outbox import LedgerOutbox
from local.ports import Misconfigured, check_free
from local.resources import create_resources
from local.scheduler import Scheduler, scheduled_event
from local.sigv4 import parse_credentials
from local.simulator import Simulator
from local.simulator.providers import LocalContext, LocalProvider
from local.simulator.providers import start as start_provider
from local.status_out import StatusOut, create_status_out_resources
from sendledger import names
from sendledger.domain.callers import principal_of

LOG = logging.getLogger("sendledger.local")

DEFAULT_PORT = 8080
DEFAULT_MOTO_PORT = 5000
DEFAULT_POLL_INTERVAL_SECONDS = 5.0
# The simulated providers publish their events within a poll or two: a timed-out send proven not
# accepted is resent about this long after it, not after the deployed default's 15 minutes.
DEFAULT_UNKNOWN_GRACE_SECONDS = 20
# Locally a failed callback is retried after 1, 2, 4, ... s; the stream is read this often.
DEFAULT_CALLBACK_RETRY_BASE_SECONDS = 1
STATUS_OUT_INTERVAL_SECONDS = 0.5
ENV_PORT = "SENDLEDGER_PORT"
ENV_MOTO_PORT = "SENDLEDGER_MOTO_PORT"
ENV_HOST = "SENDLEDGER_HOST"
# How long stop() waits for a poll cycle in flight; the scheduler's thread is a daemon, so a
# cycle still running after it cannot keep the process alive.
STOP_WAIT_SECONDS = 5.0
# Every part is a thread of one process: a request's handler, moto and a poll cycle hand the GIL
# to each other many times per call. Python's default 5 ms switch interval made each hand-over
# wait behind a busy poll cycle; 0.5 ms gives the waiting request its turn sooner.
SWITCH_INTERVAL_SECONDS = 0.0005

Handler = Callable[[dict[str, Any], Any], Any]


def configure_aws_environment(moto_port: int, environ: MutableMapping[str, str] = os.environ) -> str:
    """Point every boto3/botocore client of this process at the embedded moto server.

    Must run before any handler module is imported (they build clients at import or first
    use). Credentials are always fake: nothing here may reach a real account.
    """
    endpoint = f"http://127.0.0.1:{moto_port}"
    region = environ.get("AWS_DEFAULT_REGION") or environ.get("AWS_REGION") or REGION
    for key in ("AWS_PROFILE", "AWS_SESSION_TOKEN", "AWS_SECURITY_TOKEN"):
        environ.pop(key, None)
    environ.update(
        {
            "AWS_ACCESS_KEY_ID": "testing",
            "AWS_SECRET_ACCESS_KEY": "testing",
            "AWS_DEFAULT_REGION": region,
            "AWS_REGION": region,
            "AWS_ENDPOINT_URL": endpoint,
            "AWS_EC2_METADATA_DISABLED": "true",
        }
    )
    return endpoint


def handler_defaults(resources_env: dict[str, str]) -> dict[str, str]:
    from sendledger.domain.provider import carriers
    from sendledger.domain.recipients import Channel

    return {
        **resources_env,
        # Locally every email provider is enabled beside the default (each simulated), so one
        # stack serves every provider leg; a message records the one that carried it.
        names.ENV_EMAIL_PROVIDERS: ",".join(provider.value for provider in carriers(Channel.EMAIL)),
        names.ENV_LOCAL_PRINCIPAL: LOCAL_PRINCIPAL,
        names.ENV_POLL_INTERVAL_SECONDS: str(int(DEFAULT_POLL_INTERVAL_SECONDS)),
        names.ENV_UNKNOWN_GRACE_SECONDS: str(DEFAULT_UNKNOWN_GRACE_SECONDS),
        names.ENV_CALLBACK_RETRY_BASE_SECONDS: str(DEFAULT_CALLBACK_RETRY_BASE_SECONDS),
        # The local receiver listens on loopback: the local stack's allowance, never deployed.
        names.ENV_CALLBACK_ALLOW_LOOPBACK: "true",
        "POWERTOOLS_SERVICE_NAME": names.METRICS_SERVICE,
        "POWERTOOLS_METRICS_NAMESPACE": names.METRICS_NAMESPACE,
        "POWERTOOLS_TRACE_DISABLED": "true",
    }


def local_admins(environ: Mapping[str, str]) -> str:
    """ADMIN_PRINCIPALS by default locally: the admin credential's principal and the unsigned
    local principal (the console's Lift and Suppress buttons send unsigned requests)."""
    try:
        credentials = parse_credentials(environ.get(ENV_LOCAL_CREDENTIALS) or DEFAULT_LOCAL_CREDENTIALS)
    except ValueError:
        credentials = ()  # the gateway refuses them at start, saying why
    admins = [principal_of(c.arn).arn for c in credentials if c.name == ADMIN_CREDENTIAL]
    return " ".join([*admins, environ.get(names.ENV_LOCAL_PRINCIPAL) or LOCAL_PRINCIPAL])


def load_handler(dotted: str) -> Handler:
    module_name, _, attribute = dotted.rpartition(".")
    module = importlib.import_module(module_name)
    handler: Handler = getattr(module, attribute)
    return handler


class LocalStack:
    """Everything ``make run`` starts, in one process."""

    def __init__(
        self,
        *,
        port: int = DEFAULT_PORT,
        moto_port: int = DEFAULT_MOTO_PORT,
        host: str = "127.0.0.1",
        environ: MutableMapping[str, str] = os.environ,
    ) -> None:
        self.port = port
        self.moto_port = moto_port
        self.host = host
        self.environ = environ
        self.poll_lock = threading.RLock()  # one poll cycle at a time
        self.invoke_lock = threading.RLock()  # one handler invocation at a time
        self.moto: Any = None
        self.simulator: Simulator | None = None
        self.providers: dict[str, LocalProvider] = {}  # the simulated providers served over HTTP
        self.gateway: Gateway | None = None
        self.scheduler: Scheduler | None = None
        self.poller: Handler | None = None
        self.sms_delivery_logs: Handler | None = None
        self.status_out: StatusOut | None = None
        self.status_scheduler: Scheduler | None = None
        self.aws_endpoint = ""
        self._switch_interval = sys.getswitchinterval()
        self._gateway_serving = False

    def start(self) -> None:
        # Before anything starts: a bad setting is one line, not a traceback once half the stack runs;
        # moto's server thread dies on a taken port and leaves start() waiting.
        auth = self._checked_settings()
        check_free([(self.host, self.port, ENV_PORT), ("127.0.0.1", self.moto_port, ENV_MOTO_PORT)])
        self.aws_endpoint = configure_aws_environment(self.moto_port, self.environ)
        sys.setswitchinterval(SWITCH_INTERVAL_SECONDS)
        from local.moto_server import SerializedMotoServer

        logging.getLogger("werkzeug").setLevel(logging.WARNING)
        self.moto = SerializedMotoServer(ip_address="127.0.0.1", port=self.moto_port)
        self.moto.start()

        resources = create_resources(region=self.environ["AWS_DEFAULT_REGION"])
        for key, value in handler_defaults(resources.handler_environment()).items():
            self.environ.setdefault(key, value)
        self.environ.setdefault(names.ENV_ADMIN_PRINCIPALS, local_admins(self.environ))
        region = resources.region

        # Hook the default session before any handler builds a client from it.
        self.simulator = Simulator.install(**resources.simulator_targets())
        self._start_providers(region)

        api = load_handler(names.API_HANDLER)  # required: the stack is pointless without it
        self.poller = self._optional_handler(names.POLLER_HANDLER)
        self.sms_delivery_logs = self._optional_handler(names.SMS_DELIVERY_LOGS_HANDLER)
        if self.sms_delivery_logs is None:
            LOG.warning(
                "SMS delivery-status records are written to CloudWatch Logs but kept undelivered until %s imports",
                names.SMS_DELIVERY_LOGS_HANDLER,
            )

        self.status_out = self._status_out(resources.ledger_table, region)
        self._register_callbacks()
        interval = float(self.environ.get(names.ENV_POLL_INTERVAL_SECONDS) or 0) or (DEFAULT_POLL_INTERVAL_SECONDS)
        self.scheduler = Scheduler(self.scheduled_tick, interval)
        outbox = LedgerOutbox(self.outbox, self.environ[names.ENV_LEDGER_TABLE])  # every simulator's entries
        self.gateway = Gateway(
            api,
            principal=self.environ[names.ENV_LOCAL_PRINCIPAL],
            outbox=outbox.entries,
            poll=self.poll_once,
            make_context=context_factory(API_FUNCTION, region=region),
            invoke_lock=self.invoke_lock,
            routes=names.API_ROUTES,
            account_id=resources.account_id,
            host=self.host,
            port=self.port,
            events=self.status_out.listed if self.status_out is not None else list,
            auth=auth,
            inspector=LedgerInspector(resources.ledger_table),
            webhooks=self._optional_handler(names.WEBHOOKS_HANDLER),  # the providers' signed POSTs: their own function
            callers=self._local_callers,
        )
        self.scheduler.start()
        if self.status_out is not None:
            self.status_scheduler = Scheduler(self.status_out.pump, STATUS_OUT_INTERVAL_SECONDS)
            self.status_scheduler.start()
        self._banner(resources.ledger_table, interval)
        self.gateway.start()  # /healthz answers from here on
        self._gateway_serving = True

    def _start_providers(self, region: str) -> None:
        """Every enabled provider's simulator, wired before any handler reads its settings."""
        from sendledger.settings import Settings

        assert self.simulator is not None
        context = LocalContext(self.environ, region, self.simulator)
        for provider in Settings.from_env(self.environ).enabled_providers:
            started = start_provider(provider.value, context)
            if started is not None:
                self.providers[started.name] = started

    def _checked_settings(self) -> LocalAuth:
        """The gateway's authentication and the handlers' settings, read as they will be."""
        from sendledger.settings import Settings

        try:
            Settings.from_env({**handler_defaults({}), **self.environ})
            return LocalAuth.from_env(
                self.environ, principal=self.environ.get(names.ENV_LOCAL_PRINCIPAL) or LOCAL_PRINCIPAL
            )
        except ValueError as error:  # SettingsError, or a bad SENDLEDGER_LOCAL_AUTH / _CREDENTIALS
            raise Misconfigured(str(error)) from None

    def outbox(self) -> list[dict[str, Any]]:
        """Every provider's accepted messages, oldest first."""
        assert self.simulator is not None
        entries = self.simulator.outbox()
        for provider in self.providers.values():
            entries += provider.outbox()
        return sorted(entries, key=lambda entry: str(entry.get("sent_at", "")))

    def poll_once(self) -> dict[str, Any]:
        """One scheduled cycle: emit the simulator's queued events, then run the poller."""
        assert self.simulator is not None
        with self.poll_lock:
            started = time.perf_counter()
            flushed = self.simulator.flush(deliver_sms=self._deliver_sms)
            if self.gateway is not None:
                for provider in self.providers.values():  # pushed events reach the api before the poll
                    flushed.update(provider.flush(self.gateway.url))
            result: Any = None
            if self.poller is not None:
                event = scheduled_event(
                    now=datetime.now(UTC),
                    region=self.environ["AWS_DEFAULT_REGION"],
                    account_id=ACCOUNT_ID,
                )
                make = context_factory(
                    POLLER_FUNCTION,
                    timeout_seconds=60.0,
                    region=self.environ["AWS_DEFAULT_REGION"],
                )
                with self.invoke_lock:
                    result = self.poller(event, make())
            summary = {"flush": flushed, "poller": _jsonable(result)}
            line = cycle_line(summary, time.perf_counter() - started)
            for printed in ([line] if line else []) + resolution_lines(summary):
                LOG.info("%s", printed)
            return summary

    def scheduled_tick(self) -> None:
        """What the scheduler runs every interval: a poll cycle, then moto housekeeping."""
        from moto.core.model_instances import reset_model_data

        try:
            self.poll_once()
        finally:
            # moto keeps every model instance it creates (each item version, stream record, message)
            # in a registry only its dashboard reads: without this it grows with every request.
            reset_model_data()

    def _deliver_sms(self, event: dict[str, Any]) -> None:
        if self.sms_delivery_logs is None:
            raise RuntimeError(f"{names.SMS_DELIVERY_LOGS_HANDLER} is not importable")
        make = context_factory(SMS_DELIVERY_LOGS_FUNCTION, region=self.environ["AWS_DEFAULT_REGION"])
        with self.invoke_lock:
            self.sms_delivery_logs(event, make())

    def _local_callers(self) -> list[str]:
        """The console's caller page: the local principal's caller and each local credential's."""
        from sendledger.settings import Settings

        return list(local_callers(self.environ, Settings.from_env(self.environ).caller_tenants))

    def _register_callbacks(self) -> None:
        """CALLBACK_URL and SENDLEDGER_LOCAL_CALLER_SETTINGS (local/callers.py): a value refused stops the start."""
        given = callback_settings(self.environ)
        rules = (self.environ.get(ENV_LOCAL_CALLER_SETTINGS) or "").strip()
        try:
            if given is not None:
                register_callbacks(self.environ, *given)
            if rules:
                apply_caller_settings(self.environ, rules)
        except ValueError as error:
            raise Misconfigured(str(error)) from None

    def _status_out(self, table: str, region: str) -> StatusOut | None:
        """The publisher on the ledger's stream and the callbacks (to each caller's own URL)."""
        from sendledger.settings import Settings

        publisher = self._optional_handler(names.PUBLISHER_HANDLER)
        if publisher is None:
            return None
        settings = Settings.from_env(self.environ)
        resources = create_status_out_resources(
            table_name=table,
            bus_name=settings.event_bus_name,
            max_attempts=settings.callback_max_attempts,
            region=region,
        )
        callbacks = self._optional_handler(names.CALLBACKS_HANDLER)
        return StatusOut(
            resources=resources,
            region=region,
            publisher=publisher,
            callbacks=callbacks,
            make_context=context_factory(PUBLISHER_FUNCTION, region=region),
            invoke_lock=self.invoke_lock,
        )

    @property
    def schedulers(self) -> list[Scheduler]:
        return [scheduler for scheduler in (self.status_scheduler, self.scheduler) if scheduler is not None]

    @property
    def cycle_in_flight(self) -> bool:
        """A poll or status-out cycle that outlived ``stop()``'s wait for it."""
        return any(scheduler.running for scheduler in self.schedulers)

    def stop(self) -> None:
        for scheduler in self.schedulers:  # no new cycle starts while the servers wind down
            scheduler.request_stop()
        deadline = time.monotonic() + STOP_WAIT_SECONDS  # one wait for every cycle in flight
        if self.gateway is not None:
            if self._gateway_serving:
                self.gateway.stop()
            else:  # stopped during start: shutdown() would wait for a serve loop that never ran
                self.gateway.server.server_close()
        for provider in self.providers.values():
            provider.stop()
        for scheduler in self.schedulers:
            scheduler.stop(timeout=max(0.0, deadline - time.monotonic()))
        if self.simulator is not None:
            self.simulator.uninstall()
        if self.moto is not None:
            self.moto.stop()
        sys.setswitchinterval(self._switch_interval)

    def aws_command(self, *arguments: str) -> str:
        """An AWS CLI command line for this stack's moto that works pasted into any shell."""
        region = self.environ["AWS_DEFAULT_REGION"]
        environment = {
            "AWS_ACCESS_KEY_ID": self.environ["AWS_ACCESS_KEY_ID"],
            "AWS_SECRET_ACCESS_KEY": self.environ["AWS_SECRET_ACCESS_KEY"],
        }
        words = [f"{name}={value}" for name, value in environment.items()]
        words += ["aws", "--endpoint-url", self.aws_endpoint, "--region", region, *arguments]
        return shlex.join(words)

    def _optional_handler(self, dotted: str) -> Handler | None:
        try:
            return load_handler(dotted)
        except Exception as error:
            LOG.warning("cannot import %s (%r): running without it", dotted, error)
            return None

    def _bus(self) -> str:
        return self.status_out.resources.bus_name if self.status_out is not None else "(no publisher)"

    def _provider_lines(self) -> list[str]:
        from sendledger.settings import Settings

        settings = Settings.from_env(self.environ)
        enabled = ", ".join(provider.value for provider in settings.enabled_email_providers[1:])
        lines = [
            f"  Email:         {settings.email_provider.value} (default)" + (f"; also {enabled}" if enabled else ""),
            f"  SMS:           {settings.sms_provider.value}",
        ]
        lines += [f"    {name} simulator: {provider.url}" for name, provider in self.providers.items() if provider.url]
        return lines

    def _callback_lines(self) -> list[str]:
        from sendledger.settings import Settings

        settings = Settings.from_env(self.environ)
        given = callback_settings(self.environ)
        if given is None:
            return [
                "  Callbacks:     per caller (sendledger callers set CALLER_ID --callback-url URL; "
                "or CALLBACK_URL for every local caller)"
            ]
        url, secret = given
        return [
            f"  Callbacks:     POST {url}   (every local caller; retried after "
            f"{settings.callback_retry_base_seconds} s, doubling, {settings.callback_max_attempts} attempts)",
            f"  Callback key:  CALLBACK_SECRET={secret}",
        ]

    def _cli_line(self) -> str:
        """How to point the sendledger command at this stack (signing when unsigned requests are refused)."""
        assert self.gateway is not None
        if self.gateway.auth.mode is AuthMode.SIGV4:
            app = self.gateway.auth.credentials[0]
            signed = f"AWS_ACCESS_KEY_ID={app.access_key} AWS_SECRET_ACCESS_KEY={app.secret_key} "
            command = f".venv/bin/sendledger --sign --endpoint {self.gateway.url} suppression show bob@example.com"
            return f"  CLI:           {signed}{command}"
        return f"  CLI:           .venv/bin/sendledger --endpoint {self.gateway.url} outbox   (docs/cli.md)"

    def _banner(self, table: str, interval: float) -> None:
        assert self.gateway is not None
        lines = [
            "",
            "sendledger local stack",
            f"  API:           {self.gateway.url}   (try: curl {self.gateway.url}/healthz)",
            f"  AWS endpoint:  {self.aws_endpoint}   (moto; region "
            f"{self.environ['AWS_DEFAULT_REGION']}, fake credentials)",
            f"    {self.aws_command('dynamodb', 'scan', '--table-name', table)}",
            f"    {self.aws_command('sqs', 'list-queues')}",
            f"  Outbox:        GET {self.gateway.url}/local/outbox",
            f"  Poll now:      POST {self.gateway.url}/local/poll   (scheduled every {interval:g} s)",
            f"  Unknown grace: {self.environ[names.ENV_UNKNOWN_GRACE_SECONDS]} s   "
            f"({names.ENV_UNKNOWN_GRACE_SECONDS}: a timed-out send with no event by then is sent again)",
            f"  Events:        GET {self.gateway.url}/local/events   (the {self._bus()} bus)",
            *self._callback_lines(),
            f"  Principal:     {self.environ[names.ENV_LOCAL_PRINCIPAL]}",
            f"  Admins:        {self.environ[names.ENV_ADMIN_PRINCIPALS]}   ({names.ENV_ADMIN_PRINCIPALS})",
            *self._provider_lines(),
            *banner_lines(self.gateway.auth, self.gateway.url),
            self._cli_line(),
            "",
        ]
        print("\n".join(lines), flush=True)


def _jsonable(value: Any) -> Any:
    try:
        json.dumps(value)
        return value
    except (TypeError, ValueError):
        return repr(value)
