"""A process that runs one model once and prints its outcome as JSON (for the fault tests).

Usage: python run_once.py CONFIG MODEL AS_OF [START_AT]; START_AT (a time.time() value) makes
several processes claim the run at the same moment. riskmon's INFO log goes to stderr.
"""

from __future__ import annotations

import datetime as dt
import json
import logging
import sys
import time

from riskmon.config import load_config
from riskmon.run import run_model
from riskmon.store import MetricStore


def main(argv: list[str]) -> None:
    logging.basicConfig(level=logging.INFO, stream=sys.stderr, format="%(name)s: %(message)s")
    config = load_config(argv[1])
    model = config.model(argv[2])
    store = MetricStore.open(config.store.url)
    if len(argv) > 4:
        time.sleep(max(0.0, float(argv[4]) - time.time()))
    outcome = run_model(model, dt.date.fromisoformat(argv[3]), store=store)
    store.engine.dispose()
    print(
        json.dumps(
            {
                "status": outcome.status,
                "error": outcome.error,
                "run_id": outcome.run_id,
                "figures": len(outcome.figures),
                "baseline_version": outcome.baseline_version,
            }
        )
    )


if __name__ == "__main__":
    main(sys.argv)
