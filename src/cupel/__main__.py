"""``python -m cupel``."""

from cupel.cli import main

raise SystemExit(main())
