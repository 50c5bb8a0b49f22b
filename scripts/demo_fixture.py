"""Make an export document the demo fixture: every date an offset from a moment.

    .venv/bin/python manage.py export -o /tmp/demo.json   # after changing the demo
    .venv/bin/python scripts/demo_fixture.py /tmp/demo.json console/fixtures/demo.json \
        [--now 2026-11-29T10:00:00+00:00]

``--now`` (default: the export's ``exported_at``) becomes the moment of each later load.
Not imported by the product.
"""

import argparse
import datetime as dt
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from operations.relative_times import relative_times  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("export")
    parser.add_argument("fixture")
    parser.add_argument("--now", help="ISO 8601 moment the offsets count from")
    args = parser.parse_args()
    with open(args.export, encoding="utf-8") as fh:
        doc = json.load(fh)
    now = dt.datetime.fromisoformat(args.now or doc["exported_at"])
    doc["user_id"] = None  # the fixture replaces each namespace it holds
    with open(args.fixture, "w", encoding="utf-8") as fh:
        json.dump(relative_times(doc, now=now), fh, ensure_ascii=False, indent=1)
        fh.write("\n")


if __name__ == "__main__":
    main()
