"""Reading a file's text, in a child process with a time and a memory budget.

The worker never parses an upload itself: ``extract`` starts ``python -m
files.extraction.child``, sends it the bytes on stdin and reads its answer (JSON) on stdout.
The child caps its own address space (``resource.setrlimit(RLIMIT_AS)``,
``TALORYS_FILE_EXTRACT_MEMORY_BYTES``) before it reads anything, and is killed past
``TALORYS_FILE_EXTRACT_SECONDS``: a PDF crafted to loop or to balloon costs one child, never
the worker. Either way the file ends ``failed`` with a reason the owner can read.

The readers, chosen by measurement (benchmarks/files_extraction.py): ``pypdf`` for PDF,
``python-docx`` for Word, the standard library for Markdown, plain text, CSV and HTML
(readers.py); the text is cut into passages with their page or heading (passages.py). The
worker's side is runner.py; the child (child.py) imports no Django.
"""
