"""Shared pieces of the league tests: season files, stores, real Celery worker processes."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time
import uuid
from pathlib import Path

from conftest import ROOT

BOTS = ROOT / "sample_bots" / "python"
PG_URL = os.environ.get("ARENA_TEST_PG", "postgresql://postgres@127.0.0.1:5432/test")
REDIS_URL = os.environ.get("ARENA_TEST_REDIS", "redis://127.0.0.1:6379/9")


def unique(prefix: str) -> str:
    return f"{prefix}-{uuid.uuid4().hex[:8]}"


def season_file(folder: Path, name: str, bots: list[str | tuple[str, str]], *,
                variant: str = "two-deck-fry", deal_sets: int = 2, deals_per_set: int = 2,
                extra: str = "", fmt: str = "round_robin", duplicate: bool = True) -> Path:
    """Write a season file; ``bots`` are manifest paths or (manifest, name)."""
    lines = [f'name = "{name}"', f'variant = "{variant}"', f'format = "{fmt}"',
             f"duplicate = {'true' if duplicate else 'false'}", f"deal_sets = {deal_sets}",
             f"deals_per_set = {deals_per_set}", f'seed = "{name}"', extra]
    for b in bots:
        manifest, alias = b if isinstance(b, tuple) else (b, None)
        lines.append("[[bots]]")
        lines.append(f'manifest = "{manifest}"')
        if alias:
            lines.append(f'name = "{alias}"')
    path = folder / f"{name}.toml"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def ctrl_c_default() -> None:
    """For a process a test will Ctrl-C: SIGINT back to its default, which a process started
    in the background of a shell without job control inherits as ignored."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def env() -> dict[str, str]:
    e = dict(os.environ)
    e["PYTHONPATH"] = os.pathsep.join([str(ROOT), str(ROOT / "protos")])
    return e


#: the commands that only read or write the store (or ask a server): a test runs them in its own
#: process, through the same ``cli.main`` with its output and exit status captured, when none
#: of its own threads (not a daemon: a reconciler, a ladder) could print meanwhile and no
#: ``--wait`` needs the timeout; the others start a process as a shell does
IN_PROCESS = frozenset({"seasons", "standings", "matches", "logs", "replay", "audit",
                        "authors", "season cancel", "rules check", "rules variants",
                        "bots submit", "bots status", "bots show", "bots logs",
                        "bots withdraw", "bots unsuspend"})


def arena(*args: str, cwd: Path | None = None, timeout: float = 300,
          check: bool = False) -> subprocess.CompletedProcess:
    """Run the arena command line: in its own process, or, for a command of ``IN_PROCESS``
    from a test running no thread of its own, in this one (a Python start-up spared)."""
    if (args[0] in IN_PROCESS or " ".join(args[:2]) in IN_PROCESS) and \
            "--wait" not in args and not _threads_of_the_test():
        p = _in_this_process(args, cwd or ROOT)
    else:
        p = subprocess.run([sys.executable, "-m", "cli", *args], cwd=cwd or ROOT,
                           env=env(), capture_output=True, text=True, timeout=timeout)
    if check and p.returncode != 0:
        raise AssertionError(f"arena {' '.join(args)}: exit {p.returncode}\n{p.stdout}\n"
                             f"{p.stderr}")
    return p


def _threads_of_the_test() -> bool:
    """Whether a thread other than the main one and the daemons (a library's monitor, a test's
    server) is running."""
    return any(not t.daemon for t in threading.enumerate() if t is not threading.main_thread())


def _in_this_process(args: tuple[str, ...], cwd: Path) -> subprocess.CompletedProcess:
    """``arena ARGS`` run by ``cli.main`` in this process from ``cwd``, as its own process
    would: each store opened (and its schema checked) afresh, its output and its status (an
    uncaught error: its traceback and 1)."""
    import contextlib
    import io
    import traceback

    from cli.main import main
    from scheduler.store import schema
    out, err = io.StringIO(), io.StringIO()
    before, environ = os.getcwd(), dict(os.environ)
    engines, ready = dict(schema.ENGINES), set(schema.READY)
    schema.ENGINES.clear()
    schema.READY.clear()
    try:
        os.chdir(cwd)
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            try:
                status = main(list(args))
            except SystemExit as e:
                status = e.code
            except Exception:
                traceback.print_exc()
                status = 1
            if isinstance(status, str):  # as Python exits with a message
                print(status, file=sys.stderr)
                status = 1
    finally:
        os.chdir(before)
        os.environ.clear()
        os.environ.update(environ)
        for engine in schema.ENGINES.values():
            engine.dispose()
        schema.ENGINES.clear()
        schema.ENGINES.update(engines)
        schema.READY.clear()
        schema.READY.update(ready)
    return subprocess.CompletedProcess(["arena", *args], status or 0, out.getvalue(),
                                       err.getvalue())


class Worker:
    """``arena worker`` as a real process group (Celery main process and its pool)."""

    def __init__(self, db: str, log: Path, *, concurrency: int = 1, lease: float = 3.0,
                 broker: str = REDIS_URL, cwd: Path | None = None,
                 extra_env: dict[str, str] | None = None, intake: int = 0) -> None:
        """``intake``: the slots of its intake lane (builds and checks; 0: match lanes only,
        as the tests of seasons need)."""
        self.log_path, self.intake, self.told = log, intake, False
        self.log = open(log, "wb")
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "cli", "worker", "--db", db, "--broker", broker,
             "--concurrency", str(concurrency), "--lease", str(lease), "--loglevel", "info",
             "--hostname", f"{uuid.uuid4().hex[:6]}@test", "--intake", str(intake)],
            cwd=cwd or ROOT, env={**env(), **(extra_env or {})}, stdout=self.log,
            stderr=subprocess.STDOUT, start_new_session=True)

    def wait_ready(self, timeout: float = 60) -> None:
        """Until every lane it runs says it is ready."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            text = self.log_path.read_text(errors="replace")
            if text.count("ready.") >= 1 + bool(self.intake):
                return
            if self.proc.poll() is not None:
                raise AssertionError(f"the worker exited: {text[-3000:]}")
            time.sleep(0.2)  # (the poll of a wait on the log's ready line)
        raise AssertionError(f"the worker did not become ready: {self.log_path.read_text()}")

    def kill9(self) -> None:
        """SIGKILL the whole worker: main process, pool processes, the referee they started."""
        try:
            os.killpg(self.proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        self.proc.wait(10)

    def terminate(self) -> None:
        """SIGTERM to the whole worker (a warm shutdown), once, not waited for."""
        if self.proc.poll() is None and not self.told:
            self.told = True
            try:
                os.killpg(self.proc.pid, signal.SIGTERM)
            except ProcessLookupError:
                pass

    def stop(self) -> None:
        """A warm shutdown, waited for (a SIGKILL after 20 s)."""
        if self.proc.poll() is None:
            try:
                self.terminate()
                self.proc.wait(20)
            except subprocess.TimeoutExpired:
                self.kill9()
        self.log.close()


def stop_all(workers: list[Worker]) -> None:
    """Stop several workers, their warm shutdowns side by side."""
    for w in workers:
        w.terminate()
    for w in workers:
        w.stop()


def flush_redis(url: str = REDIS_URL) -> None:
    import redis
    redis.Redis.from_url(url).flushdb()


def wait_for(predicate, timeout: float, what: str, poll: float = 0.2):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        got = predicate()
        if got:
            return got
        time.sleep(poll)  # (the poll of wait_for)
    raise AssertionError(f"timed out after {timeout} s waiting for {what}")
