"""The owner's data: projects, tasks, notes, owner settings, usage, search, the bin and the
change log (revisions), with their API, pages, admin and tools."""
