"""Models of automations."""
