"""A base folder deleted while a process holds it (the reading room, `kb serve`, a Memory a
host keeps): every surface said `zed/.: cannot list (No such file or directory)`, a path no
one wrote and a reason that does not say the base is gone. Now one line names the base's
folder and says it is missing, in the answer's `skipped`, in the index report, in `kb check`
and in the room. Real files deleted, a real Memory, the real room."""

from __future__ import annotations

import asyncio
import shutil

from _faults import DEPLOY_Q
from conftest import copy_demo
from engine.review.check import check
from engine.memory import Memory
from engine.render import index_report
from tui_support import make_app, ready, wait_for

GONE = "cannot list (the base's folder is missing: deleted or moved)"
PROTEIN_Q = "how much protein per meal"


def test_the_answer_the_index_report_and_check_name_the_missing_base_once(tmp_path):
    fleet = copy_demo(tmp_path / "demo")
    mem = Memory(fleet)
    assert mem.ask(DEPLOY_Q, record_miss=False).skipped == ()
    shutil.rmtree(fleet / "zed")
    want = f"{fleet / 'zed'}: {GONE}"

    (report,) = [r for r in mem.refresh() if r.base == "zed"]
    assert report.skipped == [want]
    assert "zed/." not in index_report(report) and want in index_report(report)

    answer = mem.ask(PROTEIN_Q, record_miss=False)
    assert answer.skipped == (want,)
    assert answer.results[0].id == "yaron/knowledge/protein-basics.md"  # the other bases answer

    found = [f for f in check(mem) if str(fleet / "zed") in f.file]
    assert [(f.where, f.code, f.message) for f in found] == [
        (str(fleet / "zed"), "E05", GONE)
    ]  # one line: not also "no agent.txt" for a folder that is not there


def test_the_room_names_the_missing_base(tmp_path):
    fleet = copy_demo(tmp_path / "demo")

    async def go():
        app = make_app(fleet, watch=True)
        told = []
        app.notify = lambda message, **kw: told.append(message)  # what the person is told
        async with app.run_test(size=(120, 40)) as pilot:
            await ready(pilot)
            shutil.rmtree(fleet / "zed")
            await wait_for(pilot, lambda: any("missing" in m for m in told), timeout=15,
                           what=f"the missing base to be reported (told {told})")
            assert app.is_running
            assert not any("zed/." in m for m in told)
            assert any(f"{fleet / 'zed'}: {GONE}" in m for m in told)
    asyncio.run(go())
