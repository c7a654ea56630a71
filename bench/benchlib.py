"""What the Python bench scripts share: the load average beside each
figure, the data sets decompressed once under BUILD/benchdata, and timed
runs of a command."""
import os, subprocess, sys, time

DATA = os.environ.get("HOGTRAIN_DATA", os.path.abspath("../shared/data"))


def load():
    """The 1-minute load average, printed beside each figure."""
    return os.getloadavg()[0]


def data(work, name, who):
    """DATA/name.xz decompressed once into work/name; exits naming the file
    when it is absent (who: the script's name, for the message)."""
    dst = os.path.join(work, name)
    if os.path.exists(dst):
        return dst
    src = os.path.join(DATA, name + ".xz")
    if not os.path.exists(src):
        sys.exit(f"{who}: {src} not found (set HOGTRAIN_DATA)")
    with open(dst + ".part", "wb") as f:
        subprocess.run(["xz", "-dc", src], stdout=f, check=True)
    os.rename(dst + ".part", dst)
    return dst


def timed(cmd, timeout):
    """Runs cmd; its wall seconds and the finished process. A failure is a
    RuntimeError with the end of what it printed."""
    t0 = time.perf_counter()
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
    if p.returncode != 0:
        raise RuntimeError(f"{cmd[0]} failed: "
                           f"{(p.stderr or p.stdout).strip()[-300:]}")
    return time.perf_counter() - t0, p
