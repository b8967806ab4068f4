"""`python -m dmlspec` is the `dmlspec` command."""

from .cli import main

raise SystemExit(main())
