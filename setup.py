"""The extension's build for pip (pyproject.toml holds the rest).

make builds libhogtrain.a and links hogtrain/_hogtrain.so against it, as
`make python` does: the Makefile stays the one description of the build
(its flags, the libraries pkg-config names, the MPI and CUDA checks), and
setuptools only copies the result into the wheel under its ABI's name.
The build is PORTABLE (x86-64-v2, the vector kernels picked at load time),
so that a wheel runs on other x86-64 machines, in build/portable (make's
files, reused by the next install). HOGTRAIN_PORTABLE=0 with
HOGTRAIN_BUILD=build builds natively into make's own folder instead
(what .ci/run does after `make test`: only the extension's link is new);
HOGTRAIN_JOBS sets make's -j (default: the CPUs).
"""
import os
import re
import shutil
import subprocess
import sys

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext

ROOT = os.path.dirname(os.path.abspath(__file__))


def version():
    """include/hogtrain.h's HOG_VERSION_STRING, which the Makefile reads
    too: the one version of the library, the command and the package."""
    with open(os.path.join(ROOT, "include", "hogtrain.h")) as f:
        m = re.search(r'^#define HOG_VERSION_STRING "([^"]+)"', f.read(),
                      re.M)
    if not m:
        sys.exit("setup.py: include/hogtrain.h has no HOG_VERSION_STRING")
    return m.group(1)


class MakeExtension(build_ext):
    def build_extension(self, ext):
        build = os.environ.get("HOGTRAIN_BUILD", "build/portable")
        portable = os.environ.get("HOGTRAIN_PORTABLE", "1") not in ("", "0")
        jobs = os.environ.get("HOGTRAIN_JOBS", str(os.cpu_count() or 1))
        so = os.path.join(build, "python", "hogtrain", "_hogtrain.so")
        subprocess.run(["make", "-C", ROOT, "-j" + jobs, "BUILD=" + build,
                        "PORTABLE=" + ("1" if portable else ""),
                        "PYTHON=" + sys.executable, so], check=True)
        dst = self.get_ext_fullpath(ext.name)
        os.makedirs(os.path.dirname(dst), exist_ok=True)
        shutil.copyfile(os.path.join(ROOT, so), dst)


setup(version=version(),
      ext_modules=[Extension("hogtrain._hogtrain", sources=[])],
      cmdclass={"build_ext": MakeExtension})
