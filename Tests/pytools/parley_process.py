"""A real `parley` process (PARLEY_BIN) for the Python test suites (Tests/openai, Tests/openapi): its own
temporary directory and database, the environment given (no PARLEY_* inherited from the caller),
started on a free port and stopped with its files removed."""
import os
import re
import shutil
import subprocess
import tempfile
import threading
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PARLEY_BIN = os.environ.get("PARLEY_BIN", str(ROOT / ".build" / "debug" / "parley"))
STARTUP_TIMEOUT_S = 20


class ParleyProcess:
    """One server process; `base` is its http://127.0.0.1:PORT."""

    def __init__(self, env, prefix="parley-"):
        self.dir = tempfile.mkdtemp(prefix=prefix)
        full_env = {k: v for k, v in os.environ.items() if not k.startswith("PARLEY_")}
        full_env.update(env)
        self.log = open(Path(self.dir) / "server.log", "w")
        self.process = subprocess.Popen(
            [PARLEY_BIN, "--port", "0", "--db", str(Path(self.dir) / "parley.db"),
             "--public", str(ROOT / "Public")],
            stdout=subprocess.PIPE, stderr=self.log, env=full_env, text=True, bufsize=1)
        found = {}

        def read():
            for line in self.process.stdout:
                match = re.search(r"listening on (http://\S+)", line)
                if match:
                    found["base"] = match.group(1).rstrip("/")
                    break
            for _ in self.process.stdout:  # keep draining: the server never blocks on a full pipe
                pass

        threading.Thread(target=read, daemon=True).start()
        for _ in range(STARTUP_TIMEOUT_S * 20):
            if "base" in found or self.process.poll() is not None:
                break
            threading.Event().wait(0.05)
        if "base" not in found:
            self.stop()
            raise RuntimeError(f"parley did not start: {self.server_log()[-3000:]}")
        self.base = found["base"]

    def server_log(self):
        return (Path(self.dir) / "server.log").read_text(errors="replace")

    def stop(self):
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(5)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(5)
        self.log.close()
        shutil.rmtree(self.dir, ignore_errors=True)
