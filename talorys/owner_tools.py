"""Model tools over the owner's core data (tasks, projects, notes, notifications, search).

Registered when the talorys app loads. The chat-turn issue fills this in.
"""
