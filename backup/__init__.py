"""Backup: one versioned JSON document of all the owner's data, exported streamed and imported
in one transaction behind fences (backup/importer.py)."""
