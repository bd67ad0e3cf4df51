"""The model's tools over the owner's data, one module per kind of data (tasks, projects,
notes). The unified ``search`` and the recall-backed versions of the search tools are the
recall engine's (memory/tools/search.py).

Registered when the workspace app loads (apps.py imports this package). Each tool parses its
arguments (the executor has already validated them against ``args``), calls one service or
selector, and shapes a small JSON-able result (the list and search tools are ``ListTool``s).
Errors are AppErrors (ToolError among them); the executor turns them into results the model can
read and recover from. Destructive tools only propose; the owner's approval commits them
(approvals/).
"""

from talorys.workspace.tools import notes, projects, tasks
from talorys.workspace.tools.common import local_iso

__all__ = ["local_iso", "notes", "projects", "tasks"]
