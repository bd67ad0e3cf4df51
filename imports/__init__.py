"""Histories and notes brought in from elsewhere: a ChatGPT, Claude or Open WebUI export of
chats, or an Obsidian vault of Markdown notes (``readers/`` reads each, from its content).

An import is previewed (a dry run: the kind, the counts, the first titles, what is here
already) and then applied in one transaction (``services.import_apply``): conversations through
agent (``Origin.IMPORT``, the export's own times), notes through the workspace's services. It is
one ``ImportRun``, one entry in the change log (kind ``import``): reverting it moves everything
it made to the bin, and restoring it from the bin brings that back. Each item remembers where it
came from (``ImportedItem``: the export's kind and the item's own id there), so the same file
imported again adds nothing. Recall indexes what came in afterwards, in batches, counting
``indexed`` of ``total`` on the run (``services.import_index``, run by the worker).
"""
