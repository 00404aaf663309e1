from interop.drive.cli import main

raise SystemExit(main())
