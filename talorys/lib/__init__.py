"""Pure helpers that every app shares and no app owns: the error root, text validation, dates
(``when``, ``timefmt``), Markdown, env helpers, the tool contract and registry, the search
registry. No request in sight (that is ``talorys/web``); imports no app of Talorys."""
