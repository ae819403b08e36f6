"""Three `parley` processes (PARLEY_BIN) on one PostgreSQL and one Redis behind nginx round-robin, as
`make cluster` runs them (scripts/cluster.sh), for the browser tests: `base` is nginx's address, so
every request may land on any node. Stopped with everything it started, its files removed; the nodes'
logs are kept in `log_dir` as cluster-node-N.log."""
import os
import shutil
import socket
import subprocess
import tempfile
from pathlib import Path

from parley_client import ParleyClient
from parley_process import PARLEY_BIN, ROOT

SCRIPT = ROOT / "scripts" / "cluster.sh"


def free_port():
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


class ParleyCluster(ParleyClient):
    def __init__(self, env, nodes=3, public=None, log_dir=None):
        self.dir = tempfile.mkdtemp(prefix="parley-cluster-", dir="/tmp")
        self.log_dir = log_dir
        self.nodes = nodes
        port = free_port()
        environment = {key: value for key, value in os.environ.items() if not key.startswith("PARLEY_")}
        environment.update(env)
        environment.update({"PARLEY_BIN": PARLEY_BIN, "CLUSTER_PORT": str(port),
                            "PARLEY_PUBLIC": str(public or ROOT / "Public")})
        self.environment = environment
        try:
            subprocess.run([str(SCRIPT), "start", self.dir, str(nodes)], env=environment, check=True,
                           stdout=subprocess.DEVNULL, timeout=120)
        except Exception:
            self.stop()
            raise
        super().__init__(f"http://127.0.0.1:{port}")

    def stop(self):
        subprocess.run([str(SCRIPT), "stop", self.dir], env=self.environment, check=False,
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, timeout=120)
        if self.log_dir:
            for n in range(1, self.nodes + 1):
                log = Path(self.dir) / f"node-{n}.log"
                if log.exists():
                    shutil.copy(log, Path(self.log_dir) / f"cluster-node-{n}.log")
        shutil.rmtree(self.dir, ignore_errors=True)
