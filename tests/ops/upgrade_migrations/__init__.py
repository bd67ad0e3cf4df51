"""A pending migration for talorys_setup's tests (MIGRATION_MODULES points an app here): it
changes no table, fails when told to, and notes which backups existed when it ran."""
