"""``python -m interop``: run the conformance cases through an adapter."""

from interop.runner import main

raise SystemExit(main())
