"""``python -m minitorch_ln.run SCRIPT.py [args...]``: run a PyTorch script on minitorch_ln (the same as
``minitorch-ln run``; see :mod:`minitorch_ln.apps.run`)."""

from .apps.run import main

if __name__ == "__main__":
    raise SystemExit(main())
