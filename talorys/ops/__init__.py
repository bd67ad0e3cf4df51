"""Operations: setup and upgrade records, worker and beat heartbeats, the health report."""
