import os
import zlib

# Like the C++ suite: lavapipe with the validation layer on, unless the environment says otherwise
# (GPUSORT_DEVICE=<index or name> runs the tests on that device; GPUSORT_VALIDATION=0 without the
# layer). Set before any Context is made; subprocesses inherit them.
os.environ.setdefault("GPUSORT_DEVICE", "llvmpipe")
os.environ.setdefault("GPUSORT_VALIDATION", "1")

import numpy as np  # noqa: E402
import pytest  # noqa: E402

import gpusort  # noqa: E402


def pytest_report_header(config):
    try:
        device = repr(gpusort.default_context().device)
    except gpusort.Error as e:  # GPU-array tests need no Vulkan device
        device = f"no Vulkan device ({e})"
    return f"gpusort on {device}, seed {_seed}"


_seed = int(os.environ.get("GPUSORT_TEST_SEED", np.random.SeedSequence().entropy % 2**32))


@pytest.fixture
def rng(request):
    """A generator seeded per test from the run's seed (GPUSORT_TEST_SEED=<seed> reruns one)."""
    return np.random.default_rng([_seed, zlib.crc32(request.node.nodeid.encode())])


@pytest.fixture(autouse=True)
def no_validation_messages():
    """Every test fails on a validation-layer message (the C++ layer also prints it)."""
    context = gpusort.default_context()
    before = context.validation_messages
    yield
    assert context.validation_messages == before, "gpusort validation messages (see stderr)"


def pytest_runtest_logreport(report):
    if report.failed:
        report.sections.append(("gpusort", f"rerun with GPUSORT_TEST_SEED={_seed}"))
