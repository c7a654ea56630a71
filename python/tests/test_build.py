"""The package's version and build: one version for the library, the
command and the package (include/hogtrain.h's, which setup.py and the
Makefile read), and build_info() as `hogtrain --version` words it."""
import os
import re
import subprocess
from importlib import metadata

import pytest

import hogtrain

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))


def test_version_is_the_headers_and_pips():
    with open(os.path.join(ROOT, "include", "hogtrain.h")) as f:
        want = re.search(r'^#define HOG_VERSION_STRING "([^"]+)"', f.read(),
                         re.M).group(1)
    assert hogtrain.__version__ == want
    try:  # installed by pip: its metadata says the same
        assert metadata.version("hogtrain") == want
    except metadata.PackageNotFoundError:
        pass  # make python's build/python: no metadata


def test_build_info_names_the_build_and_its_kernels():
    info = hogtrain.build_info()
    assert set(info) == {"version", "build", "march", "kernels", "lanes"}
    assert info["version"] == hogtrain.__version__
    assert info["lanes"] in ("avx2+fma", "c")
    if info["build"] == "native":
        assert info["kernels"] == "native"
    else:
        assert info["build"] == "portable"
        assert info["kernels"] in ("x86-64-v2", "x86-64-v3", "x86-64-v4")
        # the v2 copy has the lanes in C; v3 and v4 have AVX2 and FMA
        assert (info["lanes"] == "c") == (info["kernels"] == "x86-64-v2")


def test_build_info_is_the_commands_when_built_alike(hogtrain_bin):
    out = subprocess.run([hogtrain_bin, "--version"], capture_output=True,
                         text=True, check=True).stdout.splitlines()
    assert out[0] == "hogtrain " + hogtrain.__version__
    words = dict(w.split("=", 1) for w in out[1].split())
    if words["build"] != hogtrain.build_info()["build"]:
        pytest.skip(f"the command {hogtrain_bin} is a {words['build']} "
                    f"build, the package a {hogtrain.build_info()['build']}")
    assert {**words, "version": hogtrain.__version__} == hogtrain.build_info()
