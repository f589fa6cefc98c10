"""One module per ``grade`` command: what the command does, behind cli.py's options."""
