#!/usr/bin/env python3
"""Print the English text of a machine-translated DirectML page (the sxs-lookup spans).

    python scripts/seed_english.py ../shared/seeds/000_95366c7ec0544d04.txt

Handy when writing a spec from a seed: the translated sentences are dropped, the English ones
kept, line numbers unchanged (so they match dmlspec's error messages).
"""

from __future__ import annotations

import sys
from pathlib import Path

from dmlspec.pages.read import english_text


def main(argv: list[str]) -> int:
    if len(argv) != 1:
        print(__doc__.strip(), file=sys.stderr)
        return 2
    try:
        text = Path(argv[0]).read_text(encoding="utf-8")
    except OSError as error:
        print(f"seed_english: {error}", file=sys.stderr)
        return 2
    sys.stdout.write(english_text(text))
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
