from takt.msggen.generate import main

raise SystemExit(main())
