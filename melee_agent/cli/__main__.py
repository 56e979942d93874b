from melee_agent.cli.main import main

raise SystemExit(main())
