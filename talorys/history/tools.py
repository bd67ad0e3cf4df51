"""``SoftDeleteTool``: the destructive tool whose commit moves one item to the bin, for every
app's delete tools."""

from __future__ import annotations

from typing import Any, ClassVar

from talorys.history.bin import bin_restore
from talorys.history.kinds import item_kind
from talorys.lib.errors import NotFound
from talorys.lib.tools import Permission, Proposal, Tool, ToolContext, snapshot_hash


class SoftDeleteTool(Tool):
    """A destructive tool that moves one row to the bin (``deleted_at``), undoable for as long
    as the bin keeps it.

    Subclasses name the model, the fields whose change should void an approval, and how to
    describe the target; ``label`` is the item's kind in the bin (talorys/history/kinds.py), whose
    services move it there and back, recording who did. The bin is invisible to lists, search
    and tools (``.live()``).
    """

    permission = Permission.DESTRUCTIVE
    cap = 5
    model: ClassVar[Any]
    id_arg: ClassVar[str]
    label: ClassVar[str]  # "task", "note"...
    snapshot_fields: ClassVar[tuple[str, ...]]

    def describe(self, obj: Any) -> str:
        return str(obj)

    def summary(self, obj: Any) -> str:
        return f"Delete the {self.label} “{self.describe(obj)}”"

    def _live(self, target_id: int, *, lock: bool = False) -> Any:
        rows = self.model.objects.live()
        if lock:
            rows = rows.select_for_update()
        return rows.filter(pk=target_id).first()

    def _hash(self, obj: Any) -> str:
        return snapshot_hash({name: getattr(obj, name) for name in self.snapshot_fields})

    def prepare(self, args: Any, ctx: ToolContext) -> Proposal:
        target_id = getattr(args, self.id_arg)
        obj = self._live(target_id)
        if obj is None:
            raise NotFound(f"There is no {self.label} with id {target_id}.")
        return Proposal(
            target_id=obj.pk,
            snapshot=self._hash(obj),
            summary=self.summary(obj),
        )

    def snapshot(self, target_id: int) -> str | None:
        # Locked: a direct owner edit cannot slip in between this check and the commit.
        obj = self._live(target_id, lock=True)
        return None if obj is None else self._hash(obj)

    def commit(self, proposal: Proposal, ctx: ToolContext) -> dict[str, Any]:
        item_kind(self.label).delete(pk=proposal.target_id, actor=ctx.actor)
        deleted_at = self.model.objects.get(pk=proposal.target_id).deleted_at
        return {"undoable": True, "deleted_at": deleted_at.isoformat()}

    def undo(self, proposal: Proposal, result: dict[str, Any]) -> dict[str, Any]:
        bin_restore(kind=self.label, pk=proposal.target_id)
        return {"restored": True}
