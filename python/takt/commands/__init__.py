"""The `takt` subcommands, one module each; takt.cli parses the arguments and calls them."""
