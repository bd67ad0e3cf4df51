"""Talorys's settings with the floor view's URL added (benchmarks/_floor_urls.py): what
benchmarks/api_throughput.py runs daphne with, so the floor is served by the same server."""

from config.settings import *  # noqa: F403

ROOT_URLCONF = "benchmarks._floor_urls"
