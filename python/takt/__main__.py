from takt.cli import main

raise SystemExit(main())
