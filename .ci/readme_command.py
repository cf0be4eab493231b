"""Prints one of the README's two set-up commands, so CI runs exactly what a newcomer reads.

Usage: ``python3 .ci/readme_command.py main|tests``. The commands are the first two ``bash``
blocks under the README's "Two commands on a fresh machine" heading; a README without them is an
error, so the README and CI cannot drift apart silently.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

HEADING = "## Two commands on a fresh machine"


def commands(readme: str) -> list[str]:
    start = readme.find(HEADING)
    if start < 0:
        raise SystemExit(f"README.md has no heading {HEADING!r}.")
    section = readme[start + len(HEADING) :]
    end = section.find("\n## ")
    section = section if end < 0 else section[:end]
    blocks = re.findall(r"```bash\n(.*?)```", section, flags=re.DOTALL)
    found = [" ".join(block.split()) for block in blocks]
    if len(found) < 2:
        raise SystemExit(f"README.md's {HEADING!r} section needs two bash blocks.")
    return found


def main() -> None:
    which = sys.argv[1] if len(sys.argv) > 1 else ""
    index = {"main": 0, "tests": 1}.get(which)
    if index is None:
        raise SystemExit("usage: readme_command.py main|tests")
    readme = (Path(__file__).resolve().parent.parent / "README.md").read_text(encoding="utf-8")
    print(commands(readme)[index])


if __name__ == "__main__":
    main()
