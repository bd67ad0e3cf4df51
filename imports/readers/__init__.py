"""Reading an export: which kind it is, from its content (``archive.export_open``), and its
items as this app's own shapes (``items.Chat``, ``items.VaultNote``), one at a time.

Each kind's reader (``chats.py``: ChatGPT, Claude, Open WebUI; ``vault.py``: Markdown notes)
turns one item of the export into one of ours or None (nothing to keep in it). The JSON is read
with ijson, one conversation at a time, so a 50 MB export is read in bounded memory; a zip is
checked whole (its entries' names, count and declared sizes) before anything in it is read.
"""
