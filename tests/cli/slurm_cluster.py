"""A one-node Slurm cluster on this machine for the tests: munged,
slurmctld and slurmd on localhost under a temporary SLURM_CONF, on free
non-default ports, every file in one temporary directory. Debian's
slurm-wlm and munge (scripts/setup.sh); the daemons run as root, so the
cluster starts only as root. `stop()` ends every daemon it started."""
import os
import shutil
import socket
import subprocess
import tempfile
import time


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class SlurmUnavailable(Exception):
    """Why the cluster cannot start here (the test skips with it)."""


class SlurmCluster:
    def __init__(self):
        self.dir = None
        self.env = None
        self.started = []  # (name, pid file)

    def start(self):
        missing = [b for b in ("munged", "slurmctld", "slurmd", "sbatch", "scontrol", "sinfo")
                   if shutil.which(b) is None and not os.path.exists("/usr/sbin/" + b)]
        if missing:
            raise SlurmUnavailable("not installed: " + ", ".join(missing) +
                                   " (scripts/setup.sh installs slurm-wlm and munge)")
        if os.geteuid() != 0:
            raise SlurmUnavailable("slurmd runs jobs as their user and must start as root")
        self.dir = tempfile.mkdtemp(prefix="eulernpu-slurm-")
        os.chmod(self.dir, 0o755)  # munged's socket must be reachable
        d = self.dir
        key = os.path.join(d, "munge.key")
        with open(key, "wb") as f:
            f.write(os.urandom(1024))
        os.chmod(key, 0o600)
        sock = os.path.join(d, "munge.sock")
        self._daemon("munged", os.path.join(d, "munged.pid"),
                     [self._sbin("munged"), "--force", "--socket=" + sock, "--key-file=" + key,
                      "--log-file=" + os.path.join(d, "munged.log"),
                      "--pid-file=" + os.path.join(d, "munged.pid"),
                      "--seed-file=" + os.path.join(d, "munged.seed")])
        for sub in ("state", "spool"):
            os.mkdir(os.path.join(d, sub))
        host = socket.gethostname().split(".")[0]
        memory_mb = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") // (2 << 20)
        conf = os.path.join(d, "slurm.conf")
        with open(conf, "w") as f:
            f.write(f"""ClusterName=eulernputest
SlurmctldHost={host}(127.0.0.1)
SlurmctldPort={free_port()}
SlurmdPort={free_port()}
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
AuthInfo=socket={sock}
CredType=cred/munge
StateSaveLocation={d}/state
SlurmdSpoolDir={d}/spool
SlurmctldPidFile={d}/slurmctld.pid
SlurmdPidFile={d}/slurmd.pid
SlurmctldLogFile={d}/slurmctld.log
SlurmdLogFile={d}/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
MpiDefault=none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
SwitchType=switch/none
ReturnToService=2
MessageTimeout=30
NodeName={host} NodeAddr=127.0.0.1 CPUs={os.cpu_count()} RealMemory={memory_mb} State=UNKNOWN
PartitionName=debug Nodes={host} Default=YES MaxTime=INFINITE State=UP
""")
        self.env = dict(os.environ, SLURM_CONF=conf)
        self._daemon("slurmctld", os.path.join(d, "slurmctld.pid"), [self._sbin("slurmctld"), "-i"])
        self._daemon("slurmd", os.path.join(d, "slurmd.pid"), [self._sbin("slurmd")])
        deadline = time.time() + 60
        while time.time() < deadline:
            r = subprocess.run(["sinfo", "-h", "-o", "%t"], env=self.env, capture_output=True,
                               text=True)
            if r.returncode == 0 and r.stdout.strip() == "idle":
                return self
            time.sleep(0.5)
        self.stop()
        raise SlurmUnavailable("the node did not become idle within 60 s:\n" + self.logs())

    @staticmethod
    def _sbin(name):
        return shutil.which(name) or "/usr/sbin/" + name

    def _daemon(self, name, pid_file, argv):
        r = subprocess.run(argv, env=self.env, capture_output=True, text=True)
        if r.returncode != 0:
            self.stop()
            raise SlurmUnavailable(f"{name} did not start: {r.stderr.strip()}")
        # Daemons write their pid file once they have forked.
        deadline = time.time() + 20
        while not os.path.exists(pid_file) and time.time() < deadline:
            time.sleep(0.1)
        self.started.append((name, pid_file))

    def logs(self):
        out = []
        for name in ("munged.log", "slurmctld.log", "slurmd.log"):
            path = os.path.join(self.dir or "", name)
            if os.path.exists(path):
                with open(path) as f:
                    out.append(f"--- {name}\n" + "".join(f.readlines()[-20:]))
        return "\n".join(out)

    def sbatch(self, *args, cwd=None):
        """Submits and returns the job id (sbatch --parsable)."""
        r = subprocess.run(["sbatch", "--parsable", *args], env=self.env, cwd=cwd,
                           capture_output=True, text=True, timeout=60)
        if r.returncode != 0:
            raise AssertionError(f"sbatch {' '.join(args)} failed: {r.stderr}")
        return r.stdout.strip().split(";")[0]

    def wait(self, job, timeout=600):
        """Waits until no task of `job` is pending or running; returns
        {array index or "": state} from scontrol."""
        deadline = time.time() + timeout
        while time.time() < deadline:
            r = subprocess.run(["squeue", "-h", "-j", job, "-o", "%i"], env=self.env,
                               capture_output=True, text=True)
            if r.returncode == 0 and not r.stdout.strip():
                break
            time.sleep(0.5)
        else:
            raise AssertionError(f"job {job} still running after {timeout} s\n" + self.logs())
        r = subprocess.run(["scontrol", "-o", "show", "job", job], env=self.env,
                           capture_output=True, text=True)
        states = {}
        for line in r.stdout.splitlines():
            fields = dict(kv.split("=", 1) for kv in line.split() if "=" in kv)
            states[fields.get("ArrayTaskId", "")] = fields.get("JobState", "?")
        return states

    def stop(self):
        """Stops every daemon started, newest first, and removes the files."""
        for name, pid_file in reversed(self.started):
            try:
                with open(pid_file) as f:
                    pid = int(f.read().split()[0])
                os.kill(pid, 15)
                for _ in range(100):
                    os.kill(pid, 0)
                    time.sleep(0.1)
                os.kill(pid, 9)
            except (OSError, ValueError, IndexError):
                pass  # gone already
        self.started = []
        if self.dir:
            shutil.rmtree(self.dir, ignore_errors=True)
            self.dir = None
