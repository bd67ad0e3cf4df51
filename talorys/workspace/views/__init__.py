"""The owner pages over the workspace: one module per page (tasks, projects, notes, bin, changes, settings, usage, backup)."""
