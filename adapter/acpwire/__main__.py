"""``python -m acpwire``: the ``acpwire`` command (:mod:`acpwire.cli`)."""

from acpwire.cli import main

if __name__ == "__main__":
    raise SystemExit(main())
