"""``python -m riskmon``: the same as the ``riskmon`` command."""

from riskmon.cli import main

main()
