"""`app.api.client.warm_up_steps`: what a new connection's first requests would do on their way,
done beforehand (the session runs the steps while the embedded sandbox boots)."""

from __future__ import annotations

import json
import subprocess
import sys

CHILD = """
import json, sys
from app.api.client import FIRST_ANSWERS, warm_up_steps
from app.api.models import ProjectList, UiConfig
assert UiConfig in FIRST_ANSWERS and ProjectList in FIRST_ANSWERS
before = [m.__pydantic_complete__ for m in FIRST_ANSWERS], "anyio._backends._asyncio" in sys.modules
for step in warm_up_steps():
    step()
after = [m.__pydantic_complete__ for m in FIRST_ANSWERS], "anyio._backends._asyncio" in sys.modules
for step in warm_up_steps():  # again: nothing breaks, nothing changes
    step()
print(json.dumps({"before": before, "after": after}))
"""


def test_the_steps_build_the_first_answers_and_import_the_http_stack() -> None:
    """In a process of its own (this one has built and imported all of it long ago): before
    the steps, no validator of the first answers is built and the HTTP stack's asyncio side is
    not imported; after them, all are."""
    out = subprocess.run(
        [sys.executable, "-c", CHILD], capture_output=True, text=True, timeout=60, check=True
    )
    seen = json.loads(out.stdout)
    (models_before, stack_before), (models_after, stack_after) = seen["before"], seen["after"]
    assert not any(models_before) and not stack_before
    assert all(models_after) and stack_after


ORDERED = """
import json
from app.api.client import FIRST_ANSWERS, OVERVIEW_ANSWERS, validators_to_build
from app.api.models import ProjectList, UiConfig, UserList
assert OVERVIEW_ANSWERS == (UiConfig, ProjectList, UserList)
first = [m.__name__ for m in FIRST_ANSWERS]
steps = validators_to_build(OVERVIEW_ANSWERS)
ProjectList.model_rebuild()  # built meanwhile: its step builds nothing more
built = [step() for step in steps]
again = len(validators_to_build(OVERVIEW_ANSWERS))
complete = [m.__pydantic_complete__ for m in OVERVIEW_ANSWERS]
print(json.dumps({"first": first, "steps": len(steps), "again": again, "complete": complete}))
"""


def test_the_overview_s_answers_come_first_and_are_built_once() -> None:
    """The overview's answers are the window's first data: the warm-up builds their validators
    before the probe's. `validators_to_build` gives a step for each one not built yet, and none
    once they are."""
    out = subprocess.run(
        [sys.executable, "-c", ORDERED], capture_output=True, text=True, timeout=60, check=True
    )
    seen = json.loads(out.stdout)
    assert seen["first"][:3] == ["UiConfig", "ProjectList", "UserList"]
    assert len(seen["first"]) == len(set(seen["first"])) > 3
    assert seen["steps"] == 3 and seen["again"] == 0
    assert seen["complete"] == [True, True, True]


UNBUILT = """
import json
import app.api.client, sandbox.server  # what the window and the sandbox child import first
from app.api import models
bodies = [v for v in vars(models).values()
          if isinstance(v, type) and issubclass(v, (models.Request, models.Response))
          and v not in (models.Request, models.Response)]
print(json.dumps({"bodies": len(bodies),
                  "built": [v.__name__ for v in bodies if v.__pydantic_complete__]}))
"""


def test_importing_the_wire_models_builds_no_validator() -> None:
    """Requests and responses alike build their validators when first used: importing the
    client and the sandbox's server (both on the way to the window's first data) builds none
    of the sixty."""
    out = subprocess.run(
        [sys.executable, "-c", UNBUILT], capture_output=True, text=True, timeout=60, check=True
    )
    seen = json.loads(out.stdout)
    assert seen["bodies"] > 50
    assert seen["built"] == []


def test_the_wire_models_annotations_are_types_not_strings() -> None:
    """`app.api.models` does without postponed annotations: each field's type is an object as
    its class is made, not a string pydantic compiles and evaluates for each of the two hundred
    fields (15 ms of the module's import, which the window and the sandbox child both make on
    the way to the first data)."""
    from app.api import models

    classes = [v for v in vars(models).values()
               if isinstance(v, type) and v.__module__ == models.__name__]  # fmt: skip
    annotations = {(cls.__name__, name): hint for cls in classes
                   for name, hint in vars(cls).get("__annotations__", {}).items()}  # fmt: skip
    assert len(annotations) > 150
    assert [key for key, hint in annotations.items() if isinstance(hint, str)] == []


BUILT_AT_IMPORT = """
import json
from pydantic import type_adapter
made = []
init = type_adapter.TypeAdapter.__init__
def watched(self, kind, *args, **kwargs):
    made.append(getattr(kind, "__name__", repr(kind)))
    init(self, kind, *args, **kwargs)
type_adapter.TypeAdapter.__init__ = watched
import app.api.client, sandbox.server
print(json.dumps(made))
"""


def test_the_sandbox_builds_its_bulk_metrics_validator_when_a_body_comes() -> None:
    """Importing the sandbox's server (its boot, which the window's first data waits for)
    builds no validator but the datetime reader the wire models keep: the bulk metrics body's
    (10 ms of the child's imports) is built for the first bulk body."""
    out = subprocess.run(
        [sys.executable, "-c", BUILT_AT_IMPORT], capture_output=True, text=True, timeout=60,
        check=True,
    )  # fmt: skip
    assert json.loads(out.stdout) == ["datetime"]


def test_importing_the_client_leaves_out_what_the_first_data_does_not_need() -> None:
    """The HTML parser reads the error pages of proxies and Express, when one comes; the streaming
    reader (and msgspec) the two lists that run to 100,000 items, not the overview (whose table
    model pauses the collector with `app.startup`)."""
    code = (
        "import json, sys; import app.api.client, app.viewmodels.overview, httpx\n"
        "print(json.dumps(sorted("
        "{'html.parser', 'msgspec', 'app.api.streaming'}"
        " & set(sys.modules))))"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=True
    )
    assert json.loads(out.stdout) == []
