"""Where the package, the command and the data sets are: the package from
build/python (make python) unless PYTHONPATH already finds one; the command
from HOGTRAIN_BIN (default build/hogtrain); the data sets from
HOGTRAIN_DATA (default ../shared/data beside the repository), their .xz
files decompressed once into a temporary directory."""
import os
import subprocess
import sys

import pytest

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
try:
    import hogtrain  # noqa: F401
except ImportError:
    sys.path.insert(0, os.path.join(ROOT, "build", "python"))

DATA = os.environ.get("HOGTRAIN_DATA",
                      os.path.join(ROOT, "..", "shared", "data"))
BIN = os.environ.get("HOGTRAIN_BIN", os.path.join(ROOT, "build", "hogtrain"))


@pytest.fixture(scope="session")
def dataset(tmp_path_factory):
    """dataset(name): the path of DATA/name (decompressed from name.xz
    once), or the test skips saying which file is missing."""
    tmp = tmp_path_factory.mktemp("data")

    def get(name):
        plain = os.path.join(DATA, name)
        if os.path.exists(plain):
            return plain
        dst = tmp / name
        if not dst.exists():
            src = plain + ".xz"
            if not os.path.exists(src):
                pytest.skip(f"{src} not found (set HOGTRAIN_DATA to the "
                            f"data sets' directory)")
            with open(str(dst) + ".part", "wb") as f:
                subprocess.run(["xz", "-dc", src], stdout=f, check=True)
            os.rename(str(dst) + ".part", dst)
        return str(dst)
    return get


@pytest.fixture(scope="session")
def hogtrain_bin():
    if not os.access(BIN, os.X_OK):
        pytest.skip(f"the command {BIN} is not built (make)")
    return BIN
