"""Runs the README's Python example as its command gives it: the file that the command of the
Python section's ```sh block runs must exist and hold the section's ```python block, verbatim."""
import os
import re
import sys

# As the tests: lavapipe with validation unless the environment names a device (see conftest.py).
os.environ.setdefault("GPUSORT_DEVICE", "llvmpipe")
os.environ.setdefault("GPUSORT_VALIDATION", "1")

readme_path = sys.argv[1]
root = os.path.dirname(os.path.abspath(readme_path))
readme = open(readme_path, encoding="utf-8").read()
section = readme.split("\n## Python\n", 1)[1].split("\n## ", 1)[0]
command = re.search(r"```sh\n(.*?)```", section, re.S).group(1)
script = re.search(r"python3 (\S+\.py)", command)
assert script, f"README.md: the Python section's command runs no .py file: {command!r}"
path = os.path.join(root, script.group(1))
assert os.path.isfile(path), f"README.md: the Python section's command runs {script.group(1)}, which does not exist"
example = re.search(r"```python\n(.*?)```", section, re.S).group(1)
text = open(path, encoding="utf-8").read()
assert text == example, f"README.md: the Python section's example differs from {script.group(1)}"
# As `python3 FILE` runs it: its folder first on the module path.
sys.path.insert(0, os.path.dirname(path))
exec(compile(text, script.group(1), "exec"), {"__name__": "__main__"})
