"""How a transactional test's tables are emptied on PostgreSQL (tests/conftest.py loads this module
as a plugin).

Django's TransactionTestCase empties them with ``flush``: one TRUNCATE of every table, then the
post_migrate signal, which finds the content types and permissions gone and makes them again.
On PostgreSQL a TRUNCATE gives each table a new file (created, then synced at the commit): on a
shared two-core machine the flush took 1.3-1.8 s and the signal 0.7-1.2 s more, in each of the
suite's ~600 transactional tests, where DELETEs of the same tables take 0.01 s. The content types
and permissions are kept instead of being made again, so there is nothing for the signal to do. What a test sees is what it saw after the flush: every table empty but those
two, which hold what the migrations made. SQLite keeps Django's flush.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import pytest
from django.db import connections, transaction
from django.test import TransactionTestCase

# Made by the migrations and the post_migrate signal, never changed by a test.
KEPT_TABLES = frozenset({"django_content_type", "auth_permission"})


def _delete_everything(alias: str) -> None:
    """Empty every model's table but KEPT_TABLES, in one transaction: the foreign keys are
    deferred (Django makes them DEFERRABLE INITIALLY DEFERRED), so the order does not matter."""
    connection = connections[alias]
    tables = connection.introspection.django_table_names(only_existing=True, include_views=False)
    statements = [
        f"DELETE FROM {connection.ops.quote_name(table)}"
        for table in sorted(tables)
        if table not in KEPT_TABLES
    ]
    with transaction.atomic(using=alias), connection.cursor() as cursor:
        cursor.execute("; ".join(statements))


def _teardown_by_delete(flush: Callable[[Any], None]) -> Callable[[Any], None]:
    def fixture_teardown(self: TransactionTestCase) -> None:
        aliases = list(self._databases_names(include_mirrors=False))
        if self.available_apps is not None or self.serialized_rollback:
            return flush(self)  # Django's rules for these: not what this suite uses
        if any(connections[alias].vendor != "postgresql" for alias in aliases):
            return flush(self)
        for alias in aliases:
            _delete_everything(alias)

    return fixture_teardown


@pytest.fixture(scope="session", autouse=True)
def _transactional_tests_empty_tables_by_delete() -> Iterator[None]:
    flush = TransactionTestCase._fixture_teardown
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(TransactionTestCase, "_fixture_teardown", _teardown_by_delete(flush))
        yield
