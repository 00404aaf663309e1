"""Allow ``python -m dernier_p2p``."""

from dernier_p2p.cli.main import main

main()
