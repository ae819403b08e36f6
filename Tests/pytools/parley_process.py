"""A real `parley` process (PARLEY_BIN) for the Python test suites (Tests/openai, Tests/openapi,
Tests/browser): its own temporary directory and database, the environment given (no PARLEY_* inherited
from the caller), started on a free port and stopped with its files removed. The server's stdout and
stderr both go to `log_path`."""
import os
import re
import shutil
import subprocess
import tempfile
import threading
from pathlib import Path

from parley_client import ParleyClient

ROOT = Path(__file__).resolve().parents[2]
PARLEY_BIN = os.environ.get("PARLEY_BIN", str(ROOT / ".build" / "debug" / "parley"))
STARTUP_TIMEOUT_S = 20


class ParleyProcess(ParleyClient):
    """One server process, and its anonymous caller: `base` is its http://127.0.0.1:PORT, and the
    ParleyClient calls (`api`, `call`, `sign_in`, `events`, `wait_finished`) carry no credentials.

    `name` names its temporary folder and the log kept in `log_dir` (as server-NAME.log) when it
    stops; `public`: the page's folder served with --public (default Public/ of this checkout)."""

    def __init__(self, env, name="parley", public=None, log_dir=None):
        if not Path(PARLEY_BIN).is_file():
            raise FileNotFoundError(f"PARLEY_BIN {PARLEY_BIN} does not exist: build parley first")
        self.name = name
        self.log_dir = log_dir
        self.dir = tempfile.mkdtemp(prefix=f"parley-{name}-")
        self.log_path = Path(self.dir) / "server.log"
        full_env = {k: v for k, v in os.environ.items() if not k.startswith("PARLEY_")}
        full_env.update(env)
        self.log = open(self.log_path, "w")
        self.process = subprocess.Popen(
            [PARLEY_BIN, "--port", "0", "--db", str(Path(self.dir) / "parley.db"),
             "--public", str(public or ROOT / "Public")],
            stdout=subprocess.PIPE, stderr=self.log, env=full_env, text=True, bufsize=1)
        found = {}
        listening = threading.Event()

        def read():
            # Keeps draining after 'listening on' so the server never blocks on a full pipe.
            try:
                for line in self.process.stdout:
                    self.log.write(line)
                    match = re.search(r"listening on (http://\S+)", line)
                    if match and "base" not in found:
                        found["base"] = match.group(1).rstrip("/")
                        listening.set()
            except ValueError:  # the log was closed by stop()
                pass
            listening.set()  # stdout ended: the process is gone

        threading.Thread(target=read, daemon=True).start()
        listening.wait(STARTUP_TIMEOUT_S)
        if "base" not in found:
            self.stop()
            raise RuntimeError(f"parley did not print 'listening on' (exit status {self.process.returncode}); "
                               f"its output:\n{self.server_log()[-3000:]}")
        super().__init__(found["base"])

    def server_log(self):
        try:
            self.log.flush()
        except ValueError:
            pass
        return self.log_path.read_text(errors="replace") if self.log_path.exists() else self._kept_log

    def stop(self):
        """Stops the server and removes its files, keeping its log in `log_dir` first when set."""
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(5)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(5)
        self.log.close()
        self._kept_log = self.log_path.read_text(errors="replace") if self.log_path.exists() else ""
        if self.log_dir is not None and Path(self.log_dir).is_dir():
            shutil.copy(self.log_path, Path(self.log_dir) / f"server-{self.name}.log")
        shutil.rmtree(self.dir, ignore_errors=True)
