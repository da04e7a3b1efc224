"""servers/kit."""
