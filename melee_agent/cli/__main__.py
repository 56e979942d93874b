from melee_agent.cli.main import main

if __name__ == "__main__":  # a spawned child process imports this module and must not run the command again
    raise SystemExit(main())
