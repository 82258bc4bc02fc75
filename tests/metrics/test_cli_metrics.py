"""`flagdesk metrics validate|upload` as a subprocess, against the sandbox: what it prints, its
one-object JSON summary and its exit statuses (0 all accepted, 1 some rejected or invalid, 2 bad
input or usage, 3 unreachable, 4 token refused, 5 accepted already, 130 Ctrl+C), resume, the
checks --dry-run makes, and that no Qt is imported.
"""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from app.api.client import AdminClient
from app.api.models import CreateFeature
from app.metrics import Body, load
from app.metrics.ledger import LEDGER_NAME, Ledger, State
from sandbox.process import SandboxProcess
from tests.conftest import known_flags
from tests.faults import closed_port
from tests.metrics.test_upload import file_rows, generate, run, stored_rows

ROOT = Path(__file__).resolve().parents[2]
LINE = re.compile(r"^(?P<file>[^:]+):(?P<line>\d+)(:(?P<col>\d+))?: (?P<path>[^:]+): (?P<msg>.+)$")


def flagdesk(
    *args: str | Path, env: dict[str, str] | None = None, data: Path | None = None
) -> subprocess.CompletedProcess[str]:
    full = {k: v for k, v in os.environ.items()
            if k not in ("FLAGDESK_TOKEN", "FLAGDESK_CLIENT_TOKEN")}  # fmt: skip
    full.update(env or {})
    if data is not None:
        full["FLAGDESK_DATA_DIR"] = str(data)
    return subprocess.run(
        [sys.executable, "-m", "app", "metrics", *map(str, args)],
        capture_output=True,
        text=True,
        env=full,
        timeout=120,
    )


def summary(result: subprocess.CompletedProcess[str]) -> dict[str, Any]:
    out: dict[str, Any] = json.loads(result.stdout)  # exactly one object, nothing else
    assert out["exit_status"] == result.returncode
    return out


def write_ndjson(path: Path, items: list[Any]) -> Path:
    path.write_text("".join((i if isinstance(i, str) else json.dumps(i)) + "\n" for i in items))
    return path


def metric(feature: str, yes: int = 3, no: int = 1, **extra: Any) -> dict[str, Any]:
    now = int(time.time() * 1000)
    return {"featureName": feature, "appName": "cli-app", "environment": "development",
            "timestamp": now - now % 3_600_000, "yes": yes, "no": no, **extra}  # fmt: skip


@pytest.fixture(scope="module")
def sandbox(tmp_path_factory: pytest.TempPathFactory) -> Iterator[SandboxProcess]:
    with SandboxProcess(tmp_path_factory.mktemp("cli") / "db.sqlite3", "--empty") as sb:
        yield sb


def tokens(sb: SandboxProcess) -> dict[str, str]:
    return {"FLAGDESK_CLIENT_TOKEN": sb.client_token}


def stored(sb: SandboxProcess, features: set[str]) -> dict[Any, tuple[int, int, int]]:
    async def read() -> dict[Any, tuple[int, int, int]]:
        async with AdminClient(sb.url, sb.admin_token) as client:
            return await stored_rows(client, features)

    return run(read())


# ---------------------------------------------------------------------------- validate


def test_validate_a_good_file_exits_0(tmp_path: Path) -> None:
    path = generate(tmp_path / "good.ndjson", 1000)
    result = flagdesk("validate", path)
    assert result.returncode == 0, result.stderr
    assert "1 file: 1,000 valid metrics, 0 invalid; 0 errors, 0 warnings" in result.stdout
    as_json = summary(flagdesk("validate", path, "--json"))
    assert as_json["metrics"] == 1000 and as_json["invalid"] == 0 and as_json["problems"] == []
    assert as_json["files"] == [
        {"file": str(path), "format": "ndjson", "metrics": 1000, "applications": 0}
    ]


def test_validate_prints_each_problem_where_it_is_and_exits_2(tmp_path: Path) -> None:
    path = write_ndjson(
        tmp_path / "bad.ndjson",
        [
            metric("v-ok"),
            metric("v-neg", yes=-1),
            '{"featureName": "v-broken", oops',
            metric("v-zero", yes=0, no=0),
        ],
    )
    result = flagdesk("validate", path)
    assert result.returncode == 2
    lines = result.stdout.splitlines()
    problems = [LINE.match(line) for line in lines[:-1]]
    assert all(problems), lines
    where = [(m["file"], m["line"], m["col"], m["path"]) for m in problems if m]
    assert (str(path), "2", None, "[1].yes") in where  # schema: the JSON path
    assert any(w[1] == "3" and w[2] is not None for w in where)  # syntax: line and column
    assert "yes" in lines[0] and "-1" in lines[0]
    assert lines[-1] == "1 file: 2 valid metrics, 2 invalid; 2 errors, 1 warning"
    as_json = summary(flagdesk("validate", path, "--json"))
    assert (as_json["errors"], as_json["warnings"], as_json["invalid"]) == (2, 1, 2)
    assert {p["severity"] for p in as_json["problems"]} == {"error", "warning"}


@pytest.mark.parametrize("form", ["array", "bulk"])
def test_validate_names_a_lone_surrogate_in_a_document_and_reads_the_rest(
    tmp_path: Path, form: str
) -> None:
    """JSON may write `"\\ud800"`, which is no Unicode text: the standard library's scanner reads
    it (documents), pydantic cannot serialise it. It was a PydanticSerializationError for the
    whole command; it is one item's error, and the other items load."""
    items = [metric("v-before"), metric("v-\ud800"), metric("v-after")]
    text = ",\n".join(json.dumps(item) for item in items)  # the escape, as JSON writes it
    doc = "[" + text + "]" if form == "array" else '{"applications": [], "metrics": [' + text + "]}"
    path = tmp_path / f"surrogate.{form}.json"
    path.write_text(doc)
    prefix = "" if form == "array" else "metrics"
    result = flagdesk("validate", path)
    assert result.returncode == 2, result.stderr
    lines = result.stdout.splitlines()
    found = LINE.match(lines[0])
    assert found is not None, lines
    assert (found["file"], found["line"], found["path"]) == (
        str(path),
        "2",
        f"{prefix}[1].featureName",
    )
    assert found["msg"].startswith("featureName holds a lone surrogate (\\ud800)")
    assert lines[-1] == "1 file: 2 valid metrics, 1 invalid; 1 error, 0 warnings"
    as_json = summary(flagdesk("validate", path, "--json"))
    assert (as_json["metrics"], as_json["invalid"], as_json["errors"]) == (2, 1, 1)
    assert as_json["problems"][0]["path"] == f"{prefix}[1].featureName"


def test_validate_a_bulk_payload_without_metrics_exits_2(tmp_path: Path) -> None:
    """The spec requires `metrics` in a bulk payload: its absence is an error with the file and
    the JSON path, not "0 valid metrics ... 0 errors" and exit 0."""
    path = tmp_path / "no-metrics.json"
    path.write_text(json.dumps({"applications": []}))
    result = flagdesk("validate", path)
    assert result.returncode == 2, result.stdout
    assert result.stdout.splitlines()[0].startswith(f"{path}:1: metrics: metrics is missing")
    assert (
        result.stdout.splitlines()[-1] == "1 file: 0 valid metrics, 0 invalid; 1 error, 0 warnings"
    )


def test_validate_a_missing_file_exits_2(tmp_path: Path) -> None:
    result = flagdesk("validate", tmp_path / "nope.json")
    assert result.returncode == 2
    assert f"{tmp_path / 'nope.json'}: no such file" in result.stderr


# ---------------------------------------------------------------------------- upload


def test_upload_stores_exactly_the_files_counts_and_exits_0(tmp_path: Path) -> None:
    first = generate(tmp_path / "a.ndjson", 12_000, "--seed", "5")
    second = generate(tmp_path / "b.json", 8_000, "--seed", "6", "--format", "bulk")
    expected = file_rows(load([first, second]))
    with SandboxProcess(tmp_path / "db.sqlite3", "--empty") as sb:
        known_flags(sb, (key[0] for key in expected))
        result = flagdesk("upload", first, second, "--url", sb.url, "--json",
                          "--concurrency", "3", env=tokens(sb), data=tmp_path)  # fmt: skip
        assert result.returncode == 0, result.stderr
        out = summary(result)
        assert stored(sb, {key[0] for key in expected}) == expected
    assert out["accepted"]["metrics"] == 20_000 and out["metrics"] == 20_000
    assert out["rejected"] == {"bodies": 0, "metrics": 0}
    assert out["pending"] == {"bodies": 0, "metrics": 0}
    assert out["accepted"]["bodies"] == out["bodies"] == out["requests"]
    assert out["largest_body"] <= 102_400
    assert [f["format"] for f in out["files"]] == ["ndjson", "bulk"]
    assert Path(out["ledger"]).parent.parent == tmp_path / "uploads"  # the data folder
    assert out["stopped"] is None and out["error"] is None
    assert "[#" not in result.stderr  # no progress bar when stderr is not a terminal


def test_upload_prints_a_report(sandbox: SandboxProcess, tmp_path: Path) -> None:
    path = write_ndjson(tmp_path / "m.ndjson", [metric("cli-report-a"), metric("cli-report-b")])
    result = flagdesk("upload", path, "--url", sb_url(sandbox), env=tokens(sandbox), data=tmp_path)
    assert result.returncode == 0, result.stderr
    assert re.search(r"accepted\s+1 body\s+2 metrics\n", result.stdout)
    assert re.search(r"rejected\s+0 bodies\s+0 metrics\n", result.stdout)
    assert f"Server  {sandbox.url}" in result.stdout
    assert sandbox.client_token not in result.stdout + result.stderr


def sb_url(sb: SandboxProcess) -> str:
    return sb.url


def test_invalid_items_are_left_out_saved_and_exit_1(
    sandbox: SandboxProcess, tmp_path: Path
) -> None:
    path = write_ndjson(
        tmp_path / "mixed.ndjson",
        [metric("cli-mixed-ok", yes=7), metric("cli-mixed-bad", no=-2), "not json at all"],
    )
    known_flags(sandbox, ["cli-mixed-ok", "cli-mixed-bad"])
    result = flagdesk("upload", path, "--url", sandbox.url, "--json",
                      env=tokens(sandbox), data=tmp_path)  # fmt: skip
    assert result.returncode == 1, result.stderr
    out = summary(result)
    assert out["invalid"] == 2 and out["accepted"]["metrics"] == 1
    saved = Path(out["invalid_file"])
    assert saved.parent == Path(out["ledger"]).parent  # next to the ledger
    records = [json.loads(line) for line in saved.read_text().splitlines()]
    assert [r["line"] for r in records] == [2, 3]
    assert stored(sandbox, {"cli-mixed-ok", "cli-mixed-bad"}) == {
        key: value for key, value in file_rows(load([path])).items()
    }
    # the text report names the file and the problems go to stderr, where they are (--again:
    # this server accepted the batch in the upload above)
    text = flagdesk("upload", path, "--url", sandbox.url, "--again",
                    env=tokens(sandbox), data=tmp_path)  # fmt: skip
    assert text.returncode == 1
    assert f"{path}:2: [1].no: " in text.stderr
    assert re.search(r"invalid\s+2 items left out \(saved to .+invalid\.ndjson\)", text.stdout)


def big_application_batch(path: Path, feature: str) -> Path:
    """A bulk payload whose one application item takes over 2,048 bytes on its own."""
    application = {"appName": "cli-app", "environment": "development", "instanceId": "i",
                   "started": 1_700_000_000_000, "interval": 10,
                   "sdkVersion": "x" * 3_000}  # fmt: skip
    path.write_text(json.dumps({"applications": [application], "metrics": [metric(feature)]}))
    return path


def test_an_application_too_large_for_any_body_is_left_out_saved_and_exit_1(
    sandbox: SandboxProcess, tmp_path: Path
) -> None:
    path = big_application_batch(tmp_path / "bigapp.json", "cli-bigapp")
    dry = flagdesk("upload", path, "--dry-run", "--max-body", "2048", "--json", data=tmp_path)
    assert dry.returncode == 1, dry.stderr
    out = summary(dry)
    assert out["invalid"] == 1 and out["errors"] == 1
    assert "application item cannot be sent" in out["problems"][0]["message"]
    sent = flagdesk("upload", path, "--url", sandbox.url, "--max-body", "2048", "--json",
                    env=tokens(sandbox), data=tmp_path)  # fmt: skip
    assert sent.returncode == 1, sent.stderr
    out = summary(sent)
    assert out["invalid"] == 1 and out["accepted"]["metrics"] == 1
    (record,) = [json.loads(line) for line in Path(out["invalid_file"]).read_text().splitlines()]
    assert record["problems"][0]["path"] == "applications[0]"
    assert json.loads(record["raw"])["sdkVersion"] == "x" * 3_000


def test_an_unreadable_ca_bundle_is_a_usage_error(sandbox: SandboxProcess, tmp_path: Path) -> None:
    path = write_ndjson(tmp_path / "m.ndjson", [metric("cli-ca")])
    missing = tmp_path / "missing-ca.pem"
    result = flagdesk("upload", path, "--url", sandbox.url, "--ca-bundle", missing, "--json",
                      env=tokens(sandbox), data=tmp_path)  # fmt: skip
    assert result.returncode == 2 and "Traceback" not in result.stderr
    assert f"The CA bundle {missing} cannot be read" in summary(result)["error"]
    assert not (tmp_path / "uploads").exists()  # no ledger either
    folder = tmp_path / "to-resume"
    data = json.dumps({"applications": [], "metrics": [metric("cli-ca")]}).encode()
    Ledger.create([Body(0, data, 1, 0)], folder=folder, server=sandbox.url).close()
    resumed = flagdesk("upload", "--resume", folder, "--ca-bundle", missing,
                       env=tokens(sandbox), data=tmp_path)  # fmt: skip
    assert resumed.returncode == 2 and "Traceback" not in resumed.stderr
    assert f"The CA bundle {missing} cannot be read" in resumed.stderr
    assert stored(sandbox, {"cli-ca"}) == {}
    check = subprocess.run(
        [sys.executable, "-m", "app", "check", "--url", sandbox.url, "--ca-bundle", str(missing)],
        capture_output=True, text=True, timeout=60,
        env={**os.environ, "FLAGDESK_TOKEN": sandbox.admin_token},
    )  # fmt: skip
    assert check.returncode == 2 and "Traceback" not in check.stderr
    assert f"flagdesk check: The CA bundle {missing} cannot be read" in check.stderr


def test_invalid_items_that_cannot_be_saved_stop_the_upload_before_anything_is_sent(
    sandbox: SandboxProcess, tmp_path: Path
) -> None:
    path = write_ndjson(tmp_path / "m.ndjson", [metric("cli-nosave"), "not json"])
    folder = tmp_path / "up"
    (folder / "invalid.ndjson").mkdir(parents=True)  # where the file should go: a folder
    result = flagdesk("upload", path, "--url", sandbox.url, "--folder", folder,
                      env=tokens(sandbox), data=tmp_path)  # fmt: skip
    assert result.returncode == 2 and "Traceback" not in result.stderr
    assert f"cannot save the items left out to {folder / 'invalid.ndjson'}" in result.stderr
    assert "Nothing was sent" in result.stderr
    assert stored(sandbox, {"cli-nosave"}) == {}
    ledger = Ledger.open(folder)  # closed, and kept for --resume
    assert [e.state for e in ledger.entries] == [State.PENDING]
    ledger.close()


def test_rejected_bodies_are_reported_saved_and_exit_1(
    sandbox: SandboxProcess, tmp_path: Path
) -> None:
    """Bodies over the server's limit (a --max-body above it) are refused with 413, not
    retried, and their items saved with the server's message."""
    path = write_ndjson(tmp_path / "big.ndjson",
                        [metric(f"cli-413-{i % 7}", yes=i + 1) for i in range(1500)])  # fmt: skip
    result = flagdesk("upload", path, "--url", sandbox.url, "--max-body", "300000", "--json",
                      env=tokens(sandbox), data=tmp_path)  # fmt: skip
    assert result.returncode == 1, result.stderr
    out = summary(result)
    assert out["rejected"]["metrics"] == 1500 and out["accepted"]["bodies"] == 0
    assert out["requests"] == out["bodies"]  # not retried
    assert {r["status"] for r in out["rejections"]} == {413}
    saved = json.loads(Path(out["rejected_file"]).read_text())
    assert sum(len(item["metrics"]) for item in saved["rejected"]) == 1500
    assert all(item["message"] for item in saved["rejected"])


def test_unreachable_exits_3_and_resume_finishes_with_exit_0(tmp_path: Path) -> None:
    port = closed_port()
    url = f"http://127.0.0.1:{port}"
    path = generate(tmp_path / "m.ndjson", 5_000, "--seed", "9")
    folder = tmp_path / "upload-1"
    env = {"FLAGDESK_CLIENT_TOKEN": "default:development." + "ab" * 16}
    result = flagdesk("upload", path, "--url", url, "--attempts", "2", "--folder", folder,
                      "--json", env=env, data=tmp_path)  # fmt: skip
    assert result.returncode == 3, result.stderr
    out = summary(result)
    assert out["stopped"] == "unreachable" and "connection refused" in out["error"]
    assert out["pending"] == {"bodies": out["bodies"], "metrics": 5_000}
    text = flagdesk("upload", "--resume", folder, "--attempts", "1", env=env, data=tmp_path)
    assert text.returncode == 3
    assert f"Resume with: flagdesk metrics upload --resume {folder}" in text.stderr

    with SandboxProcess(tmp_path / "db.sqlite3", "--empty", "--port", str(port),
                        client_token=env["FLAGDESK_CLIENT_TOKEN"]) as sb:  # fmt: skip
        assert sb.url == url
        known_flags(sb, (key[0] for key in file_rows(load([path]))))
        other = flagdesk("upload", "--resume", folder, "--url", "http://localhost:1",
                         env=env, data=tmp_path)  # fmt: skip
        assert other.returncode == 2 and f"the ledger is an upload to {url}" in other.stderr
        resumed = flagdesk("upload", "--resume", folder, "--json", env=env, data=tmp_path)
        assert resumed.returncode == 0, resumed.stderr
        again = summary(resumed)
        expected = file_rows(load([path]))
        assert stored(sb, {key[0] for key in expected}) == expected
    assert again["resumed"] is True and again["accepted"]["metrics"] == 5_000
    assert again["requests"] == out["bodies"]


@pytest.mark.parametrize("kind", ["unknown", "admin"])
def test_a_refused_token_exits_4(sandbox: SandboxProcess, tmp_path: Path, kind: str) -> None:
    token = "default:development.not-a-token-0123" if kind == "unknown" else sandbox.admin_token
    path = write_ndjson(tmp_path / "m.ndjson", [metric("cli-token")])
    result = flagdesk("upload", path, "--url", sandbox.url, "--json",
                      env={"FLAGDESK_CLIENT_TOKEN": token}, data=tmp_path)  # fmt: skip
    assert result.returncode == 4
    out = summary(result)
    assert out["stopped"] == "unauthorised" and out["pending"]["metrics"] == 1
    assert "admin API tokens and personal access tokens are refused" in out["error"]
    assert token not in result.stdout + result.stderr


def test_usage_errors_exit_2(sandbox: SandboxProcess, tmp_path: Path) -> None:
    path = write_ndjson(tmp_path / "m.ndjson", [metric("cli-usage")])
    nowhere = flagdesk("upload", path, env=tokens(sandbox), data=tmp_path)
    assert nowhere.returncode == 2 and "--profile NAME, or --url URL" in nowhere.stderr

    no_token = flagdesk("upload", path, "--url", sandbox.url, "--json", data=tmp_path)
    assert no_token.returncode == 2
    error = summary(no_token)["error"]
    assert "client token" in error and "FLAGDESK_CLIENT_TOKEN" in error
    assert "admin api tokens and personal access tokens are refused" in error.lower()

    admin_only = flagdesk("upload", path, "--url", sandbox.url,
                          env={"FLAGDESK_TOKEN": sandbox.admin_token}, data=tmp_path)  # fmt: skip
    assert admin_only.returncode == 2 and "client token" in admin_only.stderr

    both = flagdesk("upload", path, "--resume", tmp_path, "--url", sandbox.url,
                    env=tokens(sandbox), data=tmp_path)  # fmt: skip
    assert both.returncode == 2 and "give no FILE" in both.stderr
    missing_ledger = flagdesk("upload", "--resume", tmp_path / "nope", "--url", sandbox.url,
                              env=tokens(sandbox), data=tmp_path)  # fmt: skip
    assert missing_ledger.returncode == 2 and "no such ledger" in missing_ledger.stderr
    no_file = flagdesk("upload", tmp_path / "nope.ndjson", "--url", sandbox.url,
                       env=tokens(sandbox), data=tmp_path)  # fmt: skip
    assert no_file.returncode == 2 and "no such file" in no_file.stderr
    empty = write_ndjson(tmp_path / "empty.ndjson", ["[1, 2"])
    nothing = flagdesk("upload", empty, "--url", sandbox.url, env=tokens(sandbox), data=tmp_path)
    assert nothing.returncode == 2 and "no valid metric to upload" in nothing.stderr
    small = flagdesk("upload", path, "--url", sandbox.url, "--max-body", "10",
                     env=tokens(sandbox), data=tmp_path)  # fmt: skip
    assert small.returncode == 2 and "--max-body" in small.stderr
    assert not (tmp_path / "uploads").exists()  # nothing was started


def test_a_client_token_in_token_env_is_used(sandbox: SandboxProcess, tmp_path: Path) -> None:
    path = write_ndjson(tmp_path / "m.ndjson", [metric("cli-token-env", yes=11)])
    result = flagdesk("upload", path, "--url", sandbox.url, "--token-env", "MY_TOKEN", "--json",
                      env={"MY_TOKEN": sandbox.client_token}, data=tmp_path)  # fmt: skip
    assert result.returncode == 0, result.stderr
    assert summary(result)["accepted"]["metrics"] == 1


def test_names_the_server_does_not_know_are_warned_about(tmp_path: Path) -> None:
    """With a token that can list flags, metrics for a name the server has no flag of get a
    warning (Unleash answers 202 and stores nothing for them); the upload goes on."""
    with SandboxProcess(tmp_path / "demo.sqlite3") as demo:  # the demo data: flags to know

        async def create() -> None:
            async with AdminClient(demo.url, demo.admin_token) as client:
                await client.create_feature("default", CreateFeature(name="cli-known"))

        run(create())
        path = write_ndjson(tmp_path / "m.ndjson", [metric("cli-known"), metric("cli-unheard")])
        env = {**tokens(demo), "FLAGDESK_TOKEN": demo.admin_token}
        result = flagdesk("upload", path, "--url", demo.url, "--json", env=env, data=tmp_path)
        assert result.returncode == 0, result.stderr
        warned = [p["message"] for p in summary(result)["problems"] if "not known" in p["message"]]
        assert len(warned) == 1 and "cli-unheard" in warned[0] and "cli-known" not in warned[0]
        # a token that cannot list flags: said so, and the upload still goes through (--again:
        # the server accepted this batch just above)
        text = flagdesk("upload", path, "--url", demo.url, "--again", env=tokens(demo),
                        data=tmp_path)  # fmt: skip
        assert text.returncode == 0, text.stderr
        assert "Feature names not checked against the server" in text.stderr


def test_dry_run_sends_nothing(sandbox: SandboxProcess, tmp_path: Path) -> None:
    path = generate(tmp_path / "m.ndjson", 3_000)
    result = flagdesk("upload", path, "--dry-run", "--max-body", "50000", "--json", data=tmp_path)
    assert result.returncode == 0, result.stderr
    out = summary(result)
    assert out["dry_run"] is True and out["metrics"] == 3_000
    assert out["largest_body"] <= 50_000 and out["bodies"] >= 3_000 * 60 // 50_000
    assert not (tmp_path / "uploads").exists()
    text = flagdesk("upload", path, "--dry-run", data=tmp_path)
    assert text.returncode == 0 and text.stdout.startswith("Would send 3,000 metrics in ")


def test_dry_run_prints_the_same_warnings_as_an_upload(tmp_path: Path) -> None:
    """--dry-run with a connection makes the checks an upload makes: metrics for another
    environment than the client token's (Unleash drops them) and names the server has no flag
    of; without one it says what was not checked."""
    items = [metric("cli-dry-known"), metric("cli-dry-unheard"),
             metric("cli-dry-known", environment="production")]  # fmt: skip
    path = write_ndjson(tmp_path / "m.ndjson", items)
    with SandboxProcess(tmp_path / "db.sqlite3", "--empty") as sb:

        async def create() -> None:
            async with AdminClient(sb.url, sb.admin_token) as client:
                await client.create_feature("default", CreateFeature(name="cli-dry-known"))

        run(create())
        env = {**tokens(sb), "FLAGDESK_TOKEN": sb.admin_token}
        dry = flagdesk("upload", path, "--url", sb.url, "--dry-run", "--json", env=env,
                       data=tmp_path)  # fmt: skip
        assert dry.returncode == 0, dry.stderr
        real = flagdesk("upload", path, "--url", sb.url, "--json", "--send-dropped", env=env,
                        data=tmp_path)  # fmt: skip
        assert real.returncode == 0, real.stderr
        dry_text = flagdesk("upload", path, "--url", sb.url, "--dry-run", env=env, data=tmp_path)
    dry_problems, real_problems = summary(dry)["problems"], summary(real)["problems"]
    assert dry_problems == real_problems
    messages = [p["message"] for p in dry_problems]
    assert any("production" in m for m in messages), messages  # the token's is development
    assert any("cli-dry-unheard" in m and "not known" in m for m in messages), messages
    assert "production" in dry_text.stderr and "cli-dry-unheard" in dry_text.stderr
    offline = flagdesk("upload", path, "--dry-run", data=tmp_path)
    assert offline.returncode == 0
    assert "Not checked against a server" in offline.stderr
    # the upload above, to a server it cannot tell is meant, is said
    folder = summary(real)["folder"]
    assert f"uploaded to {sb.url} and accepted already (3 of its 3 metrics)" in offline.stderr
    assert folder in offline.stderr


def test_a_batch_the_server_accepted_is_sent_again_only_with_again(
    sandbox: SandboxProcess, tmp_path: Path
) -> None:
    """Uploading a finished batch again would make the server count it twice: without --again
    nothing is sent, the exit status is 5 and the earlier upload's folder is named."""
    path = write_ndjson(tmp_path / "m.ndjson", [metric("cli-twice", yes=4, no=2)])
    known_flags(sandbox, ["cli-twice"])
    first = flagdesk("upload", path, "--url", sandbox.url, "--json",
                     env=tokens(sandbox), data=tmp_path)  # fmt: skip
    assert first.returncode == 0, first.stderr
    folder = summary(first)["folder"]
    once = stored(sandbox, {"cli-twice"})
    assert sum(v[0] for v in once.values()) == 4
    again = flagdesk("upload", path, "--url", sandbox.url,
                     env=tokens(sandbox), data=tmp_path)  # fmt: skip
    assert again.returncode == 5
    assert (
        folder in again.stderr and "--again" in again.stderr and "Nothing was sent" in again.stderr
    )
    as_json = flagdesk("upload", path, "--url", sandbox.url, "--json",
                       env=tokens(sandbox), data=tmp_path)  # fmt: skip
    assert as_json.returncode == 5
    (earlier,) = summary(as_json)["already_sent"]
    assert earlier["folder"] == folder and earlier["bodies"] == 1
    assert stored(sandbox, {"cli-twice"}) == once  # not counted twice
    assert [p.name for p in (tmp_path / "uploads").iterdir()] == [Path(folder).name]
    forced = flagdesk("upload", path, "--url", sandbox.url, "--again", "--json",
                      env=tokens(sandbox), data=tmp_path)  # fmt: skip
    assert forced.returncode == 0, forced.stderr
    twice = stored(sandbox, {"cli-twice"})
    assert sum(v[0] for v in twice.values()) == 8


def test_ctrl_c_cancels_cleanly_and_resume_finishes(tmp_path: Path) -> None:
    path = generate(tmp_path / "m.ndjson", 150_000, "--seed", "12")
    folder = tmp_path / "up"
    with SandboxProcess(tmp_path / "db.sqlite3", "--empty") as sb:
        known_flags(sb, (key[0] for key in file_rows(load([path]))))
        env = {**os.environ, **tokens(sb), "FLAGDESK_DATA_DIR": str(tmp_path)}
        child = subprocess.Popen(
            [sys.executable, "-m", "app", "metrics", "upload", str(path), "--url", sb.url,
             "--folder", str(folder), "--concurrency", "1", "--json"],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env,
        )  # fmt: skip
        journal = folder / LEDGER_NAME
        deadline = time.monotonic() + 60
        while not journal.exists() or journal.read_bytes().count(b'"e":"accepted"') < 5:
            assert child.poll() is None, child.communicate()
            assert time.monotonic() < deadline
            time.sleep(0.005)
        child.send_signal(signal.SIGINT)
        stdout, stderr = child.communicate(timeout=60)
        assert child.returncode == 130, stderr
        out = json.loads(stdout)
        assert out["stopped"] == "cancelled" and out["pending"]["bodies"] > 0
        assert out["in_doubt"] == 0  # the request in flight got its answer
        ledger = Ledger.open(folder, write=False)
        assert {e.state for e in ledger.entries} == {State.ACCEPTED, State.PENDING}

        resumed = flagdesk("upload", "--resume", folder, "--json", env=tokens(sb), data=tmp_path)
        assert resumed.returncode == 0, resumed.stderr
        assert summary(resumed)["requests"] == out["pending"]["bodies"]
        expected = file_rows(load([path]))
        assert stored(sb, {key[0] for key in expected}) == expected


def test_a_progress_bar_on_a_terminal(sandbox: SandboxProcess, tmp_path: Path) -> None:
    path = write_ndjson(tmp_path / "m.ndjson", [metric(f"cli-bar-{i}") for i in range(3)])
    primary, secondary = os.openpty()
    env = {**os.environ, **tokens(sandbox), "FLAGDESK_DATA_DIR": str(tmp_path)}
    result = subprocess.run(
        [sys.executable, "-m", "app", "metrics", "upload", str(path), "--url", sandbox.url],
        stdout=subprocess.PIPE, stderr=secondary, text=True, env=env, timeout=60,
    )  # fmt: skip
    os.close(secondary)
    chunks = []
    while True:
        try:
            chunk = os.read(primary, 65536)
        except OSError:
            break
        if not chunk:
            break
        chunks.append(chunk)
    os.close(primary)
    terminal = b"".join(chunks).decode()
    assert result.returncode == 0
    assert "[##############################] 100% 1/1 requests  3/3 metrics" in terminal


def test_the_command_imports_no_qt(tmp_path: Path) -> None:
    path = generate(tmp_path / "m.ndjson", 100)
    script = (
        "import sys\n"
        "import app.commands.metrics\n"
        "from app.cli import main\n"
        f"codes = [main(['metrics', 'validate', {str(path)!r}]),\n"
        f"         main(['metrics', 'upload', '--dry-run', {str(path)!r}])]\n"
        "print(codes, sorted(m for m in sys.modules if m.split('.')[0] in "
        "('PySide6', 'shiboken6', 'qasync', 'ui')))\n"
    )
    result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                            cwd=ROOT, timeout=60)  # fmt: skip
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip().splitlines()[-1] == "[0, 0] []"


def test_upload_with_a_profile_uses_its_client_token(
    sandbox: SandboxProcess, tmp_path: Path
) -> None:
    config = {"FLAGDESK_CONFIG_DIR": str(tmp_path / "config")}
    added = subprocess.run(
        [sys.executable, "-m", "app", "profiles", "add", "metrics-test", "--url", sandbox.url,
         "--token-store", "file"],
        capture_output=True, text=True, timeout=60,
        env={**os.environ, **config, "FLAGDESK_TOKEN": sandbox.admin_token,
             "FLAGDESK_CLIENT_TOKEN": sandbox.client_token},
    )  # fmt: skip
    assert added.returncode == 0, added.stderr
    path = write_ndjson(tmp_path / "m.ndjson", [metric("cli-profile", yes=5)])
    result = flagdesk("upload", path, "--profile", "metrics-test", "--json",
                      env=config, data=tmp_path)  # fmt: skip
    assert result.returncode == 0, result.stderr
    out = summary(result)
    assert out["server"] == sandbox.url and out["accepted"]["metrics"] == 1
    assert sandbox.client_token not in result.stdout + result.stderr
    elsewhere = flagdesk("upload", "--resume", out["folder"], "--profile", "metrics-test",
                         env=config, data=tmp_path)  # fmt: skip
    assert elsewhere.returncode == 0  # nothing left to send: all accepted already


def sdk_payload(flag: str, yes: int, no: int) -> dict[str, Any]:
    """What UnleashClient 6.9.1 for Python posts to /api/client/metrics: no `environment`, and
    times with nanoseconds."""
    hour = time.strftime("%Y-%m-%dT%H", time.gmtime())
    return {
        "appName": "sdk-app",
        "instanceId": "sdk-1",
        "bucket": {
            "start": f"{hour}:00:01.123456789+00:00",
            "stop": f"{hour}:00:31.123456789+00:00",
            "toggles": {flag: {"yes": yes, "no": no, "variants": {}}},
        },
    }


def test_an_sdk_payload_lands_where_the_sdks_own_post_would(tmp_path: Path) -> None:
    """Finding 4 of issue 16: an SDK payload without an environment goes to the client token's
    environment (`default:development...`: development), where Unleash counts the SDK's own
    post; `--environment` sets another, and one the token's metrics are not kept for is
    refused, naming how to send it anyway."""
    path = tmp_path / "sdk.json"
    path.write_text(json.dumps(sdk_payload("cli-sdk-env", 248, 252)))
    with SandboxProcess(tmp_path / "db.sqlite3", "--empty") as sb:
        known_flags(sb, ["cli-sdk-env"])
        result = flagdesk("upload", path, "--url", sb.url, "--json", env=tokens(sb),
                          data=tmp_path)  # fmt: skip
        assert result.returncode == 0, result.stderr
        assert summary(result)["accepted"]["metrics"] == 1
        rows = stored(sb, {"cli-sdk-env"})
        assert [(k[2], v[:2]) for k, v in rows.items()] == [("development", (248, 252))]
        other = flagdesk("upload", path, "--url", sb.url, "--environment", "production",
                         env=tokens(sb), data=tmp_path)  # fmt: skip
        assert other.returncode == 2
        assert "'production'" in other.stderr and "kept only for 'development'" in other.stderr
        assert "--send-dropped" in other.stderr and "Nothing was sent" in other.stderr
        assert stored(sb, {"cli-sdk-env"}) == rows


def test_metrics_the_server_would_drop_are_sent_only_with_send_dropped(tmp_path: Path) -> None:
    """Another environment than the client token's, and yes and no both 0: Unleash answers 202
    and drops them, so the upload is not reported as accepted: it refuses, sending nothing."""
    items = [metric("cli-drop", environment="production"), metric("cli-drop", yes=0, no=0),
             metric("cli-drop", yes=5, no=6)]  # fmt: skip
    path = write_ndjson(tmp_path / "m.ndjson", items)
    with SandboxProcess(tmp_path / "db.sqlite3", "--empty") as sb:
        known_flags(sb, ["cli-drop"])
        refused = flagdesk("upload", path, "--url", sb.url, "--json", env=tokens(sb),
                           data=tmp_path)  # fmt: skip
        assert refused.returncode == 2
        message = summary(refused)["error"]
        assert (
            "1 metric for 'production'" in message and "1 metric with yes and no both 0" in message
        )
        assert "--environment NAME" in message and "--send-dropped" in message
        assert stored(sb, {"cli-drop"}) == {}
        sent = flagdesk("upload", path, "--url", sb.url, "--json", "--send-dropped",
                        env=tokens(sb), data=tmp_path)  # fmt: skip
        assert sent.returncode == 0, sent.stderr
        assert summary(sent)["accepted"]["metrics"] == 3
        # the sandbox drops what Unleash drops: only the development metric with counts stays
        assert [v[:2] for v in stored(sb, {"cli-drop"}).values()] == [(5, 6)]


def test_the_same_batch_split_otherwise_or_sent_to_another_spelling_is_accepted_before(
    sandbox: SandboxProcess, tmp_path: Path
) -> None:
    """Issue 35, item 1: the guard matched the exact body bytes for the exact URL text, so the
    same batch with another --max-body, or to `localhost` for `127.0.0.1`, was sent again and
    counted twice, and --dry-run of an accepted batch said nothing. A batch is its metric items,
    a server its instance id (else its normalised address): each is refused (exit 5), naming
    the earlier upload, and the server's counts stay those of the first upload."""
    features = [f"cli-dup-{i}" for i in range(40)]
    batch = [metric(f, yes=i + 1, no=i % 3) for i, f in enumerate(features * 3)]
    path = write_ndjson(tmp_path / "b.ndjson", batch)
    known_flags(sandbox, features)
    first = flagdesk("upload", path, "--url", sandbox.url, "--max-body", "4096", "--json",
                     env=tokens(sandbox), data=tmp_path)  # fmt: skip
    assert first.returncode == 0, first.stderr
    folder = summary(first)["folder"]
    assert summary(first)["bodies"] > 1
    once = stored(sandbox, set(features))
    port = sandbox.url.rsplit(":", 1)[1]
    for variant in (
        ("--url", sandbox.url, "--max-body", "8192"),
        ("--url", f"http://localhost:{port}", "--max-body", "4096"),
        ("--url", f"HTTP://LocalHost:{port}/", "--max-body", "4096"),
        ("--url", f"http://localhost:{port}", "--max-body", "4096", "--dry-run"),
    ):
        again = flagdesk("upload", path, *variant, env=tokens(sandbox), data=tmp_path)
        assert again.returncode == 5, (variant, again.stdout, again.stderr)
        assert folder in again.stderr and "accepted" in again.stderr, again.stderr
        assert "--again" in again.stderr
    assert stored(sandbox, set(features)) == once  # never counted twice
    assert [p.name for p in (tmp_path / "uploads").iterdir()] == [Path(folder).name]
    # its ledger resumes through another spelling of its server (nothing left to send)
    resumed = flagdesk("upload", "--resume", folder, "--url", f"http://localhost:{port}/",
                       env=tokens(sandbox), data=tmp_path)  # fmt: skip
    assert resumed.returncode == 0, resumed.stderr
