"""A Spark Thrift server on 127.0.0.1, for the tests and benchmarks that read loans from Spark.

The PyPI ``pyspark`` wheel carries Spark's Thrift server (``HiveThriftServer2``); it runs in
``local[2]`` mode on the machine's Java, with everything it writes (warehouse, Derby metastore,
scratch and logs) under one folder and every port it opens on 127.0.0.1. :func:`start` returns
once the server answers ``SELECT 1``; :func:`stop` ends it by the PID :func:`start` returned.
Tables are Parquet files with a table over them (:func:`load`).
"""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import time
import uuid
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pandas as pd

#: how long a server may take to answer ``SELECT 1`` (about 15 s on a quiet machine)
START_SECONDS = 240.0
#: how long a server may take to stop on SIGTERM before it is killed
STOP_SECONDS = 30.0
#: the servers this process started, by PID: reaped when stopped
_STARTED: dict[int, subprocess.Popen[bytes]] = {}


@dataclass(frozen=True)
class SparkServer:
    """A running Thrift server: its SQLAlchemy URL, its PID and its folder."""

    url: str
    pid: int
    folder: Path

    @property
    def port(self) -> int:
        return int(self.url.rsplit(":", 1)[1].split("/", 1)[0])


def missing() -> str | None:
    """Why a Spark server cannot start here (no pyspark, no Java, no PyHive), or None."""
    try:
        import pyhive  # noqa: F401
        import pyspark
    except ImportError as exc:
        return f"Spark tests need pyspark and PyHive (pip install pyspark 'riskmon[spark]'): {exc}"
    jars = Path(pyspark.__file__).parent / "jars"
    if not any(jars.glob("spark-hive-thriftserver_*.jar")):
        return f"this pyspark has no Thrift server jar in {jars}"
    if shutil.which("java") is None:
        return "Spark tests need Java (Debian: apt-get install openjdk-17-jre-headless)"
    return None


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _listening(port: int) -> bool:
    with socket.socket() as s:
        s.settimeout(0.5)
        return s.connect_ex(("127.0.0.1", port)) == 0


#: the JVM options of a server the tests start: only the quick JIT compiler (C1) and the serial
#: garbage collector. The tests send many short statements to a server that lives a minute or
#: two, where the optimising compiler's work never pays back: test_spark.py took 107 s of CPU
#: with these against 134–142 s without (the same 76–80 s of wall time). Not for benchmarks.
SHORT_LIVED_JAVA_OPTIONS = "-XX:TieredStopAtLevel=1 -XX:+UseSerialGC"
#: the Spark settings of a server the tests start: statements run interpreted, without the Java
#: code Spark generates and compiles (with Janino) for each query plan and expression, which the
#: tests' hundreds of small statements over a few thousand rows never earn back. The results
#: are the same (Spark's own tests run both ways); not for benchmarks.
SHORT_LIVED_CONF = {
    "spark.sql.codegen.wholeStage": "false",
    "spark.sql.codegen.factoryMode": "NO_CODEGEN",
}


def start(
    folder: Path,
    *,
    driver_memory: str = "1g",
    conf: dict[str, str] | None = None,
    java_options: str = "",
) -> SparkServer:
    """A Thrift server in ``local[2]`` with its state under ``folder``, answering ``SELECT 1``;
    ``java_options`` are added to the driver's JVM options."""
    import pyspark

    folder = folder.absolute()
    for sub in ("warehouse", "derby", "local", "scratch", "logs", "resources", "tmp", "tables"):
        (folder / sub).mkdir(parents=True, exist_ok=True)
    home = Path(pyspark.__file__).parent
    port = _free_port()
    settings = {
        "spark.sql.warehouse.dir": str(folder / "warehouse"),
        "spark.driver.extraJavaOptions": (
            f"-Dderby.system.home={folder / 'derby'} -Djava.io.tmpdir={folder / 'tmp'} "
            f"{java_options}"
        ).strip(),
        # the driver and its block manager listen on loopback only
        "spark.driver.host": "127.0.0.1",
        "spark.driver.bindAddress": "127.0.0.1",
        "spark.local.dir": str(folder / "local"),
        "spark.ui.enabled": "false",
        "spark.sql.shuffle.partitions": "4",
        "spark.hadoop.javax.jdo.option.ConnectionURL": (
            f"jdbc:derby:;databaseName={folder / 'metastore_db'};create=true"
        ),
        **(conf or {}),
    }
    hive = {
        "hive.server2.thrift.port": str(port),
        "hive.server2.thrift.bind.host": "127.0.0.1",
        "hive.server2.transport.mode": "binary",
        "hive.server2.authentication": "NONE",
        "hive.exec.scratchdir": str(folder / "scratch"),
        "hive.exec.local.scratchdir": str(folder / "scratch"),
        "hive.downloaded.resources.dir": str(folder / "resources"),
        "hive.server2.logging.operation.log.location": str(folder / "logs"),
    }
    command = [
        str(home / "bin" / "spark-submit"),
        "--class",
        "org.apache.spark.sql.hive.thriftserver.HiveThriftServer2",
        "--master",
        "local[2]",
        "--driver-memory",
        driver_memory,
    ]
    for key, value in settings.items():
        command += ["--conf", f"{key}={value}"]
    for key, value in hive.items():
        command += ["--hiveconf", f"{key}={value}"]
    command.append("spark-internal")
    env = {**os.environ, "SPARK_HOME": str(home), "SPARK_LOCAL_IP": "127.0.0.1"}
    env.pop("PYSPARK_SUBMIT_ARGS", None)
    with (folder / "server.log").open("wb") as log:
        # its own process group: spark-submit execs java, whose PID this is, and stop() ends
        # the group
        process = subprocess.Popen(
            command,
            cwd=folder,
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
    _STARTED[process.pid] = process
    server = SparkServer(f"hive://127.0.0.1:{port}/default", process.pid, folder)
    try:
        _await(server, process, time.monotonic() + START_SECONDS)
    except BaseException:
        stop(server.pid)
        raise
    return server


def _await(server: SparkServer, process: subprocess.Popen[bytes], deadline: float) -> None:
    from pyhive import hive

    while not _listening(server.port):
        if process.poll() is not None:
            raise RuntimeError(f"the Spark Thrift server exited; see {server.folder}/server.log")
        if time.monotonic() > deadline:
            raise TimeoutError(f"the Spark Thrift server was not listening in {START_SECONDS} s")
        time.sleep(0.25)
    while True:
        try:
            connection = hive.connect(host="127.0.0.1", port=server.port, database="default")
            try:
                cursor = connection.cursor()
                cursor.execute("SELECT 1")
                if cursor.fetchall() == [(1,)]:
                    return
            finally:
                connection.close()
        except Exception:
            if time.monotonic() > deadline:
                raise
        time.sleep(0.5)


def _alive(pid: int) -> bool:
    process = _STARTED.get(pid)
    if process is not None:  # started here: reaped as it ends
        return process.poll() is None
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


def stop(pid: int) -> None:
    """End the server of ``pid`` (its process group): SIGTERM, SIGKILL after STOP_SECONDS."""
    try:
        group = os.getpgid(pid)
    except ProcessLookupError:
        return
    kill = os.killpg if group == pid else os.kill
    try:
        kill(pid, signal.SIGTERM)
    except ProcessLookupError:
        return
    deadline = time.monotonic() + STOP_SECONDS
    while _alive(pid) and time.monotonic() < deadline:
        time.sleep(0.1)
    if _alive(pid):
        kill(pid, signal.SIGKILL)
        while _alive(pid):
            time.sleep(0.1)
    _STARTED.pop(pid, None)


def load(server: SparkServer, frame: pd.DataFrame, table: str = "loans") -> None:
    """``frame`` as Spark table ``table`` (replacing it): Parquet files with a table over them."""
    import pyarrow as pa
    import pyarrow.parquet as pq
    from pyhive import hive

    folder = server.folder / "tables" / f"{table}-{uuid.uuid4().hex[:8]}"
    folder.mkdir(parents=True)
    arrow = pa.Table.from_pandas(frame, preserve_index=False)
    pq.write_table(arrow, folder / "part-0.parquet", coerce_timestamps="us")
    connection = hive.connect(host="127.0.0.1", port=server.port, database="default")
    try:
        cursor = connection.cursor()
        cursor.execute(f"DROP TABLE IF EXISTS {table}")
        cursor.execute(f"CREATE TABLE {table} USING parquet LOCATION '{folder}'")
    finally:
        connection.close()


def sql(server: SparkServer, statement: str) -> list[Any]:
    """The rows of one statement run on ``server``."""
    from pyhive import hive

    connection = hive.connect(host="127.0.0.1", port=server.port, database="default")
    try:
        cursor = connection.cursor()
        cursor.execute(statement)
        return list(cursor.fetchall()) if cursor.description else []
    finally:
        connection.close()
