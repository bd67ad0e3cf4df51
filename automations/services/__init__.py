"""Everything that changes automations, one module per job.

- ``crud``: the owner's changes (create, update, pause, resume, bin, cancel) and the bin kind.
- ``dispatch``: claims due slots and advances the schedules; it returns its claims, and the
  Celery task (automations/tasks.py) enqueues one run per claim.
- ``runs``: the run of one claimed slot, with its receipt and its lease; and a chunk of
  reminders' and digests' slots run together in one transaction (``automation_runs_together``).
- ``housekeeping``: closing runs whose worker died, purging the automations' bin.

Exactly one run per (automation, slot):

1. The dispatcher (beat, every few seconds) locks due rows with ``SELECT ... FOR UPDATE SKIP
   LOCKED`` and moves ``next_run_at`` past now in the same transaction: concurrent dispatchers
   take disjoint rows, and a committed claim is never due again. The run task is enqueued once
   the claim has committed, carrying the automation's ``version``.
2. ``automation_run`` locks the automation, ignores the task when the version moved on (paused,
   resumed, rescheduled, cancelled or deleted since the claim), and creates the receipt
   (AutomationRun, unique per automation and slot) before any work. A redelivered or duplicated
   task finds the receipt and does nothing.
   - ``reminder`` and ``task_digest`` write receipt, notification and outcome in ONE
     transaction: all or nothing, so a crash before commit leaves nothing behind and the
     redelivered task (acks_late) does the work.
   - ``agent_prompt`` commits the receipt first, because the model call must not run inside a
     transaction. While the call runs, the worker renews the receipt's lease (``RUN_LEASE``). A
     crash during the call leaves a ``running`` receipt whose lease runs out: housekeeping, or
     the automation's next slot, marks it interrupted; it is never re-run, since the model may
     already have told the owner something.
3. One run at a time per automation: a slot that comes while the automation's previous run is
   still in progress (lease live) gets a "skipped" receipt saying so, and is not run.

Missed slots (workers down): the dispatcher runs the latest missed slot once if it is less than
24 hours old (``CATCH_UP_WINDOW``; slots in between are folded into that one run). A slot older
than that is not run: it gets a "skipped" receipt and a notification, and the schedule is
re-armed from now. A worker runs the dispatcher when it starts, so catch-up happens at start.

Why the owner's automations are not beat's jobs: beat runs the fixed system jobs
(CELERY_BEAT_SCHEDULE, talorys/ops/beat.py), which are sweeps, each doing whatever is due, so a
tick sent twice or lost changes nothing. That is all beat promises: it saves a job's last run
every few minutes, not as it sends it, so a beat killed in between sends again, and two beats
send everything twice. Automations need what is above (one run per slot across restarts and
redeliveries, the version check, catch-up, schedules in the owner's zone with its
daylight-saving rules), so beat only ticks this dispatcher: pausing ``automations-dispatch`` in
System jobs holds every automation.

A repeating ``agent_prompt`` is started only by the owner's session (``UnwatchedSpending`` in
crud.py, for the API, the pages, the admin and the tools alike).
"""
