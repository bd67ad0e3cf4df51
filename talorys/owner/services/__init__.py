"""What changes the owner's settings and the day's usage: ``settings`` (the one row, its checks
and bounds, the owner's time zone), ``usage`` (reserve a request of a day's budget, record
tokens), ``connection`` (Test connection: one small request to a model server)."""
