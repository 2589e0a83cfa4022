"""Runs the README's Python example as written: the first ```python block of its Python section."""
import os
import re
import sys

# As the tests: lavapipe with validation unless the environment names a device (see conftest.py).
os.environ.setdefault("GPUSORT_DEVICE", "llvmpipe")
os.environ.setdefault("GPUSORT_VALIDATION", "1")

readme = open(sys.argv[1], encoding="utf-8").read()
section = readme.split("\n## Python\n", 1)[1].split("\n## ", 1)[0]
example = re.search(r"```python\n(.*?)```", section, re.S).group(1)
exec(compile(example, "README.md (Python example)", "exec"), {"__name__": "__main__"})
