"""The recall engine: one ranking over every kind the owner keeps.

- ``text``: how text becomes terms (folding, stop words, the Snowball stemmer) and hashes.
- ``sources``: the kinds it indexes; each app registers its own (memory, workspace's kinds here;
  agent's messages and automations' automations from their apps), so memory imports no app
  above it.
- ``index``: each process's in-memory index (BM25 postings and the vectors), kept in step with
  the ``RecallEntry`` table by its ``seq``.
- ``threads``: the order of each conversation's turns in the index (which turn came before).
- ``priors``: what ranking knows besides an item's text: its conversation and its time.
- ``engine``: keyword, vector and hybrid ranking, the priors, snippets, and the check that a
  hit is still live.

The table is written by ``memory.services.reindex``/``reindex_recent``; reads go through
``memory.selectors.recall_items``/``recall_memories``.
"""
