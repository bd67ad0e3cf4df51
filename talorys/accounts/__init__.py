"""The owner's account: login and its throttle, sessions, the password, API tokens and their
scopes, and the admin site's throttled login."""
