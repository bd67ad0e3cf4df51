"""Notifications: the rows, their live socket and Web Push delivery."""
