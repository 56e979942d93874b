from melee_agent_cli.main import main

raise SystemExit(main())
