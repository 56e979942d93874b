"""The `melee-agent` command line: one module per subcommand, dispatched from `main`."""
