"""What `vis python` runs in the interpreter itself, outside the user's program."""
