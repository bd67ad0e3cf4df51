"""The extraction child: ``python -m files.extraction.child CONTENT_TYPE MEMORY_BYTES``, the
file's bytes on stdin, JSON on stdout: ``{"passages": [...], "pages": n}`` or
``{"reason": "..."}``. It caps its address space first, and imports no Django."""

from __future__ import annotations

import json
import resource
import sys


def main() -> None:
    content_type, memory = sys.argv[1], int(sys.argv[2])
    if memory > 0:
        resource.setrlimit(resource.RLIMIT_AS, (memory, memory))
    data = sys.stdin.buffer.read()
    from files.extraction.passages import passages
    from files.extraction.readers import READERS, Unreadable

    reader = READERS.get(content_type)
    if reader is None:
        sys.stdout.write(json.dumps({"reason": f"Talorys reads no text from {content_type}."}))
        return
    try:
        sections, pages = reader(data)
        answer: dict[str, object] = {
            "passages": [p.as_json() for p in passages(sections)],
            "pages": pages,
        }
    except Unreadable as error:
        answer = {"reason": str(error)}
    except MemoryError:
        answer = {
            "reason": "Reading this file needed more memory than Talorys allows, so it was stopped."
        }
    sys.stdout.write(json.dumps(answer))


if __name__ == "__main__":
    main()
